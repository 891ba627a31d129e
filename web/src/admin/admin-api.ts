// The console's calls. Screens with a shape of their own use the typed client (api/client.ts); the
// list, item and bulk routes every family shares go through these few helpers, their rows typed from
// the generated schema by the screen that shows them.
import { rawFetch } from '../api/client';

export interface Page<Row> {
  success: true;
  data: Row[];
  page: number;
  limit: number;
  total: number;
}

export function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export async function adminGet<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  return (await rawFetch(`${path}${queryString(query)}`)).json() as Promise<T>;
}

export async function adminSend<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  return (await rawFetch(path, init)).json() as Promise<T>;
}

/** `{success, changed}` of a bulk route. */
export const bulkDelete = (family: string, ids: string[]) => adminSend<{ changed: number }>('POST', `/api/admin/${family}/bulk-delete`, { ids });

export { fieldErrors } from './field-errors';
