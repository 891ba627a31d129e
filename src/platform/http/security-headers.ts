// Helmet's security headers, worked out once at start. The options are the same for every route, so
// running helmet's dozen middlewares per request would recompute the same headers (they cost as much as
// the rest of a cached route's work).
//
// Those that act on any answer (nosniff, HSTS, the resource and framing policies) go on every answer,
// with CORS's (cors.ts). Those that act only on a document a browser renders (the opener and agent
// cluster policies, the referrer policy, DNS prefetching, the XSS auditor, IE's download and Adobe's
// cross-domain switches) go on documents only: the web client's page and files and the API reference
// (`addDocumentHeaders`, called by their routes). On a JSON answer they did nothing, and each header is
// work on every request (docs/decisions.md, "HTTP").
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { CORS_HEADERS, crossOrigin } from './cors.js';

// The reply's own header store (Fastify's field: an object of lower-case names it writes the answer's
// headers from). Should a Fastify release rename it, `reply.headers` is used.
const { kReplyHeaders } = createRequire(import.meta.url)('fastify/lib/symbols.js') as { kReplyHeaders?: symbol };

export const HELMET_OPTIONS: Readonly<HelmetOptions> = {
  // An API answers JSON; the reference page at /api/docs loads its own scripts.
  contentSecurityPolicy: false,
  // Embedding pages on other origins read the API.
  crossOriginResourcePolicy: { policy: 'cross-origin' },
};

/** The headers helmet sets with these options, by running it once against a recording response. */
export function securityHeaders(options: Readonly<HelmetOptions> = HELMET_OPTIONS): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  let ran = false;
  helmet(options)({} as never, recorder as never, () => (ran = true));
  if (!ran) throw new Error('helmet did not finish synchronously');
  return headers;
}

/** Helmet's headers that act only on a document a browser renders, not on data a page reads. */
export const DOCUMENT_ONLY_HEADERS: ReadonlySet<string> = new Set([
  'cross-origin-opener-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
]);

const helmetHeaders = Object.entries(securityHeaders());
const answerHeaders: Readonly<Record<string, string>> = {
  ...Object.fromEntries(helmetHeaders.filter(([name]) => !DOCUMENT_ONLY_HEADERS.has(name))),
  ...CORS_HEADERS,
};
const documentOnly: Readonly<Record<string, string>> = Object.fromEntries(helmetHeaders.filter(([name]) => DOCUMENT_ONLY_HEADERS.has(name)));

/**
 * The first hook of every request: the headers of every answer, in one step, then the request's own
 * part of CORS (cors.ts), which answers preflights itself.
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    setAnswerHeaders(reply);
    let answered: boolean;
    try {
      answered = crossOrigin(request, reply);
    } catch (error) {
      return done(error as Error);
    }
    if (!answered) done();
  });
}

/**
 * The headers of every answer, copied at once into the reply's header store: their names are already
 * lower case and the same on every request, so `reply.headers` (a call, a `toLowerCase` and a
 * `set-cookie` check per header) has nothing to add. A fresh reply's store is empty, and a header set
 * later (by a route, or by CORS below) replaces these as `reply.header` would.
 */
function setAnswerHeaders(reply: FastifyReply): void {
  const store = kReplyHeaders === undefined ? undefined : (Reflect.get(reply, kReplyHeaders) as Record<string, unknown> | undefined);
  if (store !== undefined && store !== null && typeof store === 'object') Object.assign(store, answerHeaders);
  else reply.headers(answerHeaders);
}

/** Helmet's document-only headers, on an answer that is a document (a page, or a file of the web client). */
export function addDocumentHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers(documentOnly);
}
