// Helmet's security headers, worked out once at start and set on every answer together with CORS's
// (cors.ts). The options are the same for every route, so running helmet's dozen middlewares per
// request would recompute the same headers (they cost as much as the rest of a cached route's work).
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { CORS_HEADERS, crossOrigin } from './cors.js';

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

/**
 * The first hook of every request: the security headers and CORS's fixed headers, in one step, then the
 * request's own part of CORS (cors.ts), which answers preflights itself.
 */
export function registerResponseHeaders(app: FastifyInstance): void {
  const headers = { ...securityHeaders(), ...CORS_HEADERS };
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    let answered: boolean;
    try {
      answered = crossOrigin(request, reply);
    } catch (error) {
      return done(error as Error);
    }
    if (!answered) done();
  });
}
