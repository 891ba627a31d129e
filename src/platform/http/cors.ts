// Cross-origin requests (CORS): any origin may call the API with credentials (embedding pages run on
// the institution's own sites) and read the request id. Preflights are answered here, in the first
// hook, before authentication: a browser sends no token with one.
//
// This was @fastify/cors with `{ origin: true, credentials: true, exposedHeaders: ['x-request-id'] }`;
// it is written here so that the headers every answer carries are set in the same step as the
// security headers (security-headers.ts), once, instead of by a second hook working its options out
// again on each request. Three decisions differ from the plugin's: a preflight allows every
// method the API uses (the plugin allowed GET, HEAD and POST only, so a page on another origin could
// not PUT or DELETE), a malformed preflight answers the failure shape (400 INVALID_PREFLIGHT), and an
// answer to a request without an Origin carries no CORS header but Vary (the plugin sent the credentials
// and exposed-headers ones on every answer, where no browser reads them).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError } from './errors.js';

/** What every answer carries, whatever the origin: the origin varies the answer, and caches must know. */
export const CORS_HEADERS: Readonly<Record<string, string>> = { vary: 'Origin' };

export const CORS_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE';

/**
 * The request's own part of CORS, after CORS_HEADERS are set: its origin is allowed back, and an OPTIONS
 * request is a preflight, answered here. Returns true when the answer has been sent.
 */
export function crossOrigin(request: FastifyRequest, reply: FastifyReply): boolean {
  const origin = request.headers.origin;
  // Only a request with an Origin is read under CORS: the rest (same-origin reads without one, servers,
  // scripts) are not, and get no CORS headers but Vary.
  if (origin) {
    reply
      .header('access-control-allow-origin', origin)
      .header('access-control-allow-credentials', 'true')
      .header('access-control-expose-headers', 'x-request-id');
  }
  if (request.method !== 'OPTIONS') return false;
  if (!origin || !request.headers['access-control-request-method']) {
    throw new BadRequestError('A preflight request needs the Origin and Access-Control-Request-Method headers', 'INVALID_PREFLIGHT');
  }
  const asked = request.headers['access-control-request-headers'];
  reply.header('vary', 'Origin, Access-Control-Request-Headers').header('access-control-allow-methods', CORS_METHODS);
  if (asked !== undefined) reply.header('access-control-allow-headers', asked);
  // Safari waits for a body unless a 204 says its length.
  reply.code(204).header('content-length', '0').send();
  return true;
}
