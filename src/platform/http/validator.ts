// Route schemas are zod's (fastify-type-provider-zod), with one shortcut: a part that arrives as an empty
// object (the `{}` body every poll of a "no body" route sends, an empty query) skips the parse when the
// schema, tried once on `{}` at start, accepts it and gives back an empty object. A zod object parse
// builds its result, issue list and payload objects on every request, and this is most requests of a
// cached route. The answer is what zod's would be: a new empty object, or zod's error for a schema
// that refuses `{}` (those parse as before). A schema whose checks depend on more than the value (none
// here) must not be given to a route.
import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';

export const validatorCompiler: FastifySchemaCompiler<ZodType> = (route) => {
  const validate = zodValidatorCompiler(route);
  if (!givesEmpty(tryOn(validate))) return validate;
  return (data) => (isEmptyObject(data) ? { value: {} } : validate(data));
};

/** The result of `{}` (undefined when the schema cannot be tried synchronously, e.g. an async check). */
function tryOn(validate: (data: unknown) => unknown): unknown {
  try {
    return validate({});
  } catch {
    return undefined;
  }
}

function givesEmpty(result: unknown): boolean {
  if (typeof result !== 'object' || result === null || 'error' in result) return false;
  const value: unknown = (result as { value?: unknown }).value;
  return isEmptyObject(value) && Object.getPrototypeOf(value) === Object.prototype;
}

/** A non-array object with no enumerable keys (JSON.parse's `{}`, an empty query). */
function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const _key in value) return false;
  return true;
}
