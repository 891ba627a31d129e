// The auth guard: every route requires a session unless its config says otherwise
// (`config: { auth: 'none' | 'optional' }`). The token comes from `x-access-token` or
// `Authorization: Bearer`; a missing, invalid, expired or revoked one answers 401.
// A visitor's token (an embedded twin's visitor, no account) answers 403 VISITOR_SCOPE on every route
// but those whose config says `visitors: true`; those read the caller with `callerOf`, and
// `request.actor` (a person) stays null for a visitor, so person-only code never meets one.
import type { FastifyInstance, FastifyRequest, HookHandlerDoneFunction as HookDone } from 'fastify';
import { isVisitor, type Actor, type Caller, type VisitorActor } from './actor.js';
import { ForbiddenError, UnauthorizedError } from './errors.js';
import { routeConfig } from './route-config.js';

export type AuthMode = 'required' | 'optional' | 'none' | 'bearer';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'required' (default), 'optional', 'none', or 'bearer' (Authorization: Bearer only, as the SSE route). */
    auth?: AuthMode;
    /** The route serves an embedded twin's visitors too (read the caller with `callerOf`). */
    visitors?: boolean;
  }
  interface FastifyRequest {
    /** The signed-in person; null for a visitor. */
    actor: Actor | null;
    /** The visitor, on a route that serves visitors. */
    visitor: VisitorActor | null;
  }
}

export type VerifyToken = (token: string) => Promise<Actor | null>;
/** How the guard knows callers: `verifyCaller` resolves a token; `peek` answers at once for a recently resolved one. */
export interface TokenVerifier {
  verifyCaller: (token: string) => Promise<Caller | null>;
  peek: (token: string) => Caller | undefined;
}

export const VISITOR_SCOPE_MESSAGE = 'This route is not available to visitors of an embedded twin';
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
  app.decorateRequest('visitor', null);
  const admit = (request: FastifyRequest, caller: Caller | null, mode: AuthMode, visitors: boolean, done: HookDone) => {
    if (!caller) return mode === 'optional' ? done() : done(new UnauthorizedError('Invalid or expired token'));
    if (isVisitor(caller)) {
      if (!visitors) return done(new ForbiddenError(VISITOR_SCOPE_MESSAGE, 'VISITOR_SCOPE'));
      request.visitor = caller;
      return done();
    }
    const actor = caller;
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
    const config = routeConfig(request);
    const mode = config?.auth ?? 'required';
    const visitors = config?.visitors === true;
    if (mode === 'none' || !config?.url) return done();
    const token = readToken(request, mode);
    if (!token) return mode === 'optional' ? done() : done(new UnauthorizedError());
    const known = verifier.peek(token);
    if (known) return admit(request, known, mode, visitors, done);
    verifier.verifyCaller(token).then((caller) => admit(request, caller, mode, visitors, done), done);
  });
}

/** The actor of a route that requires one; the guard has already refused anonymous callers. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthorizedError();
  return request.actor;
}

/** The caller of a route that serves visitors too: the person, or the visitor. */
export function callerOf(request: FastifyRequest): Caller {
  const caller = request.actor ?? request.visitor;
  if (!caller) throw new UnauthorizedError();
  return caller;
}
