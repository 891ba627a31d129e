// The one way the client talks to the service: openapi-fetch over the types generated from the
// service's OpenAPI document (schema.d.ts, made at build time), with the session token attached.
// Every failure becomes an ApiError carrying the status and the service's {message, code}.
import createClient, { type Middleware } from 'openapi-fetch';
import { ApiError, type FailureBody } from './api-error';
import type { paths } from './schema';

const TOKEN_KEY = 'dt.token';

/**
 * A token handed over in the URL fragment (`#dt.token=…`: a course launch in a frame whose storage the
 * browser refuses), taken out of the address bar at once and kept in memory.
 */
function takeFragmentToken(): string | null {
  if (typeof location === 'undefined') return null;
  const token = new URLSearchParams(location.hash.slice(1)).get(TOKEN_KEY);
  if (token) history.replaceState(null, '', location.pathname + location.search);
  return token;
}
let memoryToken: string | null = takeFragmentToken();

/** localStorage when the browser allows it (a frame on another site may be refused it); memory otherwise. */
export const tokenStore = {
  get: (): string | null => {
    if (memoryToken) return memoryToken;
    try {
      return localStorage.getItem(TOKEN_KEY);
    } catch {
      return null;
    }
  },
  set: (token: string) => {
    try {
      localStorage.setItem(TOKEN_KEY, token);
      memoryToken = null;
    } catch {
      memoryToken = token;
    }
  },
  clear: () => {
    memoryToken = null;
    try {
      localStorage.removeItem(TOKEN_KEY);
    } catch {
      // Nothing was stored there.
    }
  },
};

/** Listeners told when the session ends (401 on an authenticated call). */
const sessionEndListeners = new Set<() => void>();
export function onSessionEnded(listener: () => void): () => void {
  sessionEndListeners.add(listener);
  return () => sessionEndListeners.delete(listener);
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = tokenStore.get();
    if (token && !request.headers.has('x-access-token')) request.headers.set('x-access-token', token);
    return request;
  },
  onResponse({ response, request }) {
    if (response.status === 401 && request.headers.has('x-access-token')) for (const listener of sessionEndListeners) listener();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** The data of an openapi-fetch answer, or an ApiError. */
export async function unwrap<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok || data === undefined) throw new ApiError(response.status, (error ?? {}) as FailureBody);
  return data;
}

/** For the few calls the generated types cannot describe (multipart with progress, file downloads, routes newer than the build). */
export async function rawFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = tokenStore.get();
  if (token) headers.set('x-access-token', token);
  const response = await fetch(path, { ...init, headers });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as FailureBody;
    if (response.status === 401 && token) for (const listener of sessionEndListeners) listener();
    throw new ApiError(response.status, body);
  }
  return response;
}
