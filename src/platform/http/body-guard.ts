// Refuses, before any handler or schema sees them, the inputs no route may act on, once for body,
// query and path params, at any depth:
// - keys that try to smuggle update operators or prototypes: any key starting with `$`, and
//   `__proto__`, `constructor` or `prototype` (400 FORBIDDEN_KEY);
// - text PostgreSQL cannot store: a NUL character (text and jsonb refuse 0x00) or a lone UTF-16
//   surrogate (jsonb refuses the escape JSON.stringify makes of it; text would silently get U+FFFD),
//   in a value or a key (400 INVALID_TEXT, naming the field);
// - nesting deeper than MAX_DEPTH (400 TOO_DEEP): no route takes such shapes, and a free-form jsonb
//   field would otherwise carry it to code that recurses.
// Unknown keys are otherwise dropped by the route schemas (zod objects strip them).
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from './errors.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
export const MAX_DEPTH = 32;
// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type InputProblem = { kind: 'key'; field: string; key: string } | { kind: 'text' | 'depth'; field: string };

/** The first problem in one request part (`body`, `query`, `params`), walking without recursion. */
export function findInputProblem(part: string, value: unknown): InputProblem | null {
  // Most requests' params, query and body are empty or absent: nothing to walk.
  if (value === undefined || value === null || isEmptyObject(value)) return null;
  const stack: Array<{ value: unknown; field: string; depth: number }> = [{ value, field: part, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, field, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (UNSTORABLE.test(current)) return { kind: 'text', field };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_DEPTH) return { kind: 'depth', field };
    const entries: Array<[string, unknown]> = Array.isArray(current)
      ? current.map((item, index) => [String(index), item])
      : Object.entries(current);
    // Pushed in reverse so the first key is looked at first (the error names the earliest field).
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, item] = entries[i];
      const path = `${field}.${key}`;
      if (!Array.isArray(current)) {
        if (key.startsWith('$') || FORBIDDEN_KEYS.has(key)) return { kind: 'key', field: path, key };
        if (UNSTORABLE.test(key)) return { kind: 'text', field: path };
      }
      stack.push({ value: item, field: path, depth: depth + 1 });
    }
  }
  return null;
}

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  for (const _key in value) return false;
  return true;
}

/** The first forbidden key in a value, or null (kept for callers that check a value themselves). */
export function findForbiddenKey(value: unknown): string | null {
  const problem = findInputProblem('value', value);
  return problem?.kind === 'key' ? problem.key : null;
}

/** The 400 a problem answers; a route whose schema-error message the spec fixes (e.g. "Invalid Properties") uses it here too. */
function refusal(problem: InputProblem, fixed: string | undefined): BadRequestError {
  // The field is named in `error` either way.
  if (problem.kind === 'key') {
    return new BadRequestError(fixed ?? `Invalid Properties: key "${problem.key}" is not allowed`, 'FORBIDDEN_KEY', { field: problem.key });
  }
  if (problem.kind === 'depth') {
    return new BadRequestError(fixed ?? `Invalid ${problem.field}: nested deeper than ${MAX_DEPTH} levels`, 'TOO_DEEP', { field: problem.field });
  }
  return new BadRequestError(
    fixed ?? `Invalid ${problem.field}: must not contain NUL characters or unpaired surrogates`,
    'INVALID_TEXT',
    { field: problem.field },
  );
}

export function registerBodyGuard(app: FastifyInstance): void {
  // A callback hook: it runs on every request and needs no promise.
  app.addHook('preValidation', (request, _reply, done) => {
    const problem =
      findInputProblem('params', request.params) ?? findInputProblem('query', request.query) ?? findInputProblem('body', request.body);
    if (!problem) return done();
    done(refusal(problem, request.routeOptions.config?.validationMessage));
  });
}
