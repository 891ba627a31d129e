// The service's field errors as a map from the wire's field name to its words, so a form shows each
// at its field: schema errors and the services' own 400s both carry `error.issues[].field` ("body.email").
import { ApiError } from '../api/api-error.js';

/** The service's field errors: `error.issues[].field` ("body.email") → message; other failures: none. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const detail = error.body.error;
  if (!detail || typeof detail !== 'object') return {};
  const issues = (detail as { issues?: Array<{ field?: string; message?: string }> }).issues ?? [];
  const out: Record<string, string> = {};
  for (const issue of issues) {
    if (!issue.field) continue;
    const name = issue.field.replace(/^body\./, '').split('.')[0];
    out[name] ??= issue.message ?? 'is invalid';
  }
  return out;
}
