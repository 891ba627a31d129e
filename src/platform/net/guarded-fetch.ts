// A fetch for outbound requests an administrator pointed the service at (the MCP SDK's transports take
// it as their `fetch`). Each request is checked by the outbound policy and its connection goes to the
// address the check resolved (a pinned lookup: no second DNS answer can redirect it). Redirects are
// followed only when the caller asks (`redirect: 'follow'`, the fetch default), each hop checked again,
// credentials dropped when the origin changes; `manual` returns them, `error` refuses them.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { CheckedTarget, OutboundPolicy } from './outbound-guard.js';

export type GuardedFetch = ((input: string | URL, init?: RequestInit) => Promise<Response>) & {
  /** Closes the kept-alive connections (at shutdown). */
  close(): void;
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NO_BODY = new Set([101, 204, 205, 304]);
const MAX_REDIRECTS = 5;
/** How many times a request goes again after meeting a closed kept-alive connection (one per idle connection kept). */
const MAX_STALE_RETRIES = 5;

/** Failures of requests that met a kept-alive connection the server had closed: they never reached it. */
const staleConnectionFailures = new WeakSet<Error>();

/** A lookup that answers the checked address whatever the name: the connection goes where the check looked. */
export function pinnedLookup(target: CheckedTarget): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

export function createGuardedFetch(policy: OutboundPolicy, options: { sensitiveHeaders?: readonly string[] } = {}): GuardedFetch {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const sensitive = new Set(['authorization', 'cookie', 'proxy-authorization', ...(options.sensitiveHeaders ?? []).map((h) => h.toLowerCase())]);

  async function send(url: URL, method: string, headers: Headers, body: Buffer | undefined, signal?: AbortSignal | null): Promise<Response> {
    const target = await policy.check(url);
    // A kept-alive connection the server closed while it sat idle fails as soon as it is used again,
    // before the server saw the request (Node's `reusedSocket`): that request goes again, on another
    // connection (a new one once the idle ones are used up). A failure on a new connection is the answer.
    // (A reset of a reused connection the server had read from is sent again too; the MCP pool already
    // tries any request that failed in transport once more, on a new client.)
    for (let attempt = 0; ; attempt++) {
      try {
        return await sendOnce(url, target, method, headers, body, signal);
      } catch (error) {
        if (!staleConnectionFailures.has(error as Error) || attempt >= MAX_STALE_RETRIES) throw error;
      }
    }
  }

  function sendOnce(url: URL, target: CheckedTarget, method: string, headers: Headers, body: Buffer | undefined, signal?: AbortSignal | null): Promise<Response> {
    signal?.throwIfAborted();
    const secure = url.protocol === 'https:';
    return new Promise<Response>((resolve, reject) => {
      const request = (secure ? https : http).request(
        {
          protocol: url.protocol,
          host: target.host,
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method,
          headers: { ...Object.fromEntries(headers), ...(body ? { 'content-length': String(body.length) } : {}) },
          agent: secure ? agents.https : agents.http,
          lookup: pinnedLookup(target),
          signal: signal ?? undefined,
        },
        (incoming) => {
          const responseHeaders = new Headers();
          for (let i = 0; i < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i], incoming.rawHeaders[i + 1]);
          const status = incoming.statusCode ?? 502;
          const empty = method === 'HEAD' || NO_BODY.has(status);
          if (empty) incoming.resume();
          const stream = empty ? null : (Readable.toWeb(incoming) as NodeReadableStream<Uint8Array> as unknown as ReadableStream<Uint8Array>);
          const response = new Response(stream, { status, statusText: incoming.statusMessage, headers: responseHeaders });
          Object.defineProperty(response, 'url', { value: url.href });
          resolve(response);
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (request.reusedSocket && error.code === 'ECONNRESET' && !signal?.aborted) staleConnectionFailures.add(error);
        reject(error);
      });
      request.end(body);
    });
  }

  const guardedFetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const prepared = new Request(input, init);
    let url = new URL(prepared.url);
    let method = prepared.method;
    const headers = new Headers(prepared.headers);
    let body = prepared.body ? Buffer.from(await prepared.arrayBuffer()) : undefined;
    const mode = init.redirect ?? 'follow';
    for (let hop = 0; ; hop++) {
      const response = await send(url, method, headers, body, init.signal);
      const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
      if (!location || mode === 'manual') return response;
      await response.body?.cancel();
      if (mode === 'error' || hop === MAX_REDIRECTS) throw new TypeError(`Redirect to ${new URL(location, url).origin} refused`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) for (const name of sensitive) headers.delete(name);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers.delete('content-type');
      }
      url = next;
    }
  };

  return Object.assign(guardedFetch, {
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}
