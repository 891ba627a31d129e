// The service's field errors as a map from the wire's field name to its words, so a form shows each
// at its field: schema errors and the services' own 400s both carry `error.issues[].field` ("body.email").
// A nested field is named both whole ("caps.dailyTurns") and by its group ("caps").
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
    const path = issue.field.replace(/^body\./, '');
    const message = issue.message ?? 'is invalid';
    const parts = path.split('.');
    out[parts[0]] ??= message;
    // An array's item ("models.3") stays with its field; a nested object's field has its own name too.
    if (parts.length > 1 && !/^\d+$/.test(parts[1])) out[`${parts[0]}.${parts[1]}`] ??= message;
  }
  return out;
}
