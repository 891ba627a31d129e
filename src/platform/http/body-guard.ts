// Refuses bodies that try to smuggle update operators or prototype keys: any key starting with `$`,
// and `__proto__`, `constructor` or `prototype`, at any depth, answer 400 before a handler sees them.
// Unknown keys are otherwise dropped by the route schemas (zod objects strip them).
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from './errors.js';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function findForbiddenKey(value: unknown, depth = 0): string | null {
  if (depth > 32 || value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findForbiddenKey(item, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key.startsWith('$') || FORBIDDEN_KEYS.has(key)) return key;
    const found = findForbiddenKey((value as Record<string, unknown>)[key], depth + 1);
    if (found) return found;
  }
  return null;
}

export function registerBodyGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const key = findForbiddenKey(request.body) ?? findForbiddenKey(request.query);
    if (!key) return;
    // A route whose schema-error message the spec fixes (e.g. "Invalid Properties") uses it here too.
    const message = request.routeOptions.config?.validationMessage ?? `Invalid Properties: key "${key}" is not allowed`;
    throw new BadRequestError(message, 'FORBIDDEN_KEY', { field: key });
  });
}
