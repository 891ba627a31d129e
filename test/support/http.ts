// A small helper for route tests: inject a request as a signed-in person and read status and body.
import type { App } from '../../src/platform/http/schemas.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export function requester(app: App) {
  return async (token: string | null, method: Method, url: string, payload?: unknown) => {
    const response = await app.inject({
      method,
      url,
      headers: token ? { 'x-access-token': token } : {},
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    return { status: response.statusCode, body: response.body ? response.json() : undefined };
  };
}

/** A Socket.IO Q&A request over real HTTP (POST /api/ai/personal/qanda), as a client sends it: status and JSON body. */
export async function askQanda(base: string, token: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/api/ai/personal/qanda`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-token': token },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
