// The auth guard: every route requires a session unless its config says otherwise
// (`config: { auth: 'none' | 'optional' }`). The token comes from `x-access-token` or
// `Authorization: Bearer`; a missing, invalid, expired or revoked one answers 401.
import type { FastifyInstance, FastifyRequest, HookHandlerDoneFunction as HookDone } from 'fastify';
import type { Actor } from './actor.js';
import { UnauthorizedError } from './errors.js';

export type AuthMode = 'required' | 'optional' | 'none' | 'bearer';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'required' (default), 'optional', 'none', or 'bearer' (Authorization: Bearer only, as the SSE route). */
    auth?: AuthMode;
  }
  interface FastifyRequest {
    actor: Actor | null;
  }
}

export type VerifyToken = (token: string) => Promise<Actor | null>;
/** How the guard knows callers: `verify` resolves a token; `peek` answers at once for a recently resolved one. */
export interface TokenVerifier {
  verify: VerifyToken;
  peek: (token: string) => Actor | undefined;
}
/** Checks run after the actor is known (launch scope, password change); throw to refuse. */
export type ActorCheck = (request: FastifyRequest, actor: Actor) => void;

export function readToken(request: FastifyRequest, mode: AuthMode = 'required'): string | null {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && /^Bearer\s+/i.test(authorization)) {
    return authorization.replace(/^Bearer\s+/i, '').trim() || null;
  }
  if (mode === 'bearer') return null;
  const header = request.headers['x-access-token'];
  return typeof header === 'string' && header.length > 0 ? header : null;
}

export function registerAuthGuard(app: FastifyInstance, verifier: TokenVerifier, checks: ActorCheck[] = []): void {
  app.decorateRequest('actor', null);
  const admit = (request: FastifyRequest, actor: Actor | null, mode: AuthMode, done: HookDone) => {
    if (!actor) return mode === 'optional' ? done() : done(new UnauthorizedError('Invalid or expired token'));
    request.actor = actor;
    try {
      for (const check of checks) check(request, actor);
    } catch (error) {
      return done(error as Error);
    }
    done();
  };
  // A callback hook, not an async one: a caller known from the last few seconds (nearly every request)
  // passes without a promise or a trip through the microtask queue.
  app.addHook('onRequest', (request, _reply, done) => {
    // One read of the route's options: Fastify builds them afresh on each read.
    const route = request.routeOptions;
    const mode = route.config?.auth ?? 'required';
    if (mode === 'none' || !route.url) return done();
    const token = readToken(request, mode);
    if (!token) return mode === 'optional' ? done() : done(new UnauthorizedError());
    const known = verifier.peek(token);
    if (known) return admit(request, known, mode, done);
    verifier.verify(token).then((actor) => admit(request, actor, mode, done), done);
  });
}

/** The actor of a route that requires one; the guard has already refused anonymous callers. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthorizedError();
  return request.actor;
}
