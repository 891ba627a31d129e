// Sign-in, session tokens and sign-out. Every token names a server-side session, so revoking the
// session (sign-out, admin deletion, password change) stops the token at once.
import type { Database } from '../../platform/db/client.js';
import { isVisitor, type Actor, type Caller } from '../../platform/http/actor.js';
import { newId } from '../../platform/ids/ids.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../platform/http/errors.js';
import { permissionsFor } from '../../platform/http/permissions.js';
import type { ProfileService } from '../users/profile.service.js';
import type { ProfileWire } from '../users/profile.schemas.js';
import { findTwinById } from '../twins/twins.repo.js';
import { findUserByEmail } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';
import { verifyPassword } from '../../platform/crypto/passwords.js';
import type { SessionCache } from './session-cache.js';
import { findSessionContext, findVisitorSession, insertSession, revokeSession } from './sessions.repo.js';
import { TOKEN_LIFETIME_SECONDS, type TokenSigner } from './tokens.js';

export const INVALID_CREDENTIALS = 'Invalid email or password';

export interface ClientInfo {
  ip: string;
  userAgent: string;
}

export interface SignedIn {
  token: string;
  profile: ProfileWire;
}

export interface AuthServiceDeps {
  db: Database;
  tokens: TokenSigner;
  profiles: ProfileService;
  cache: SessionCache;
}

export function createAuthService({ db, tokens, profiles, cache }: AuthServiceDeps) {
  async function openSession(
    user: UserRow,
    client: ClientInfo,
    scope: { kind: 'full' | 'launch'; twinId?: string | null } = { kind: 'full' },
  ): Promise<SignedIn> {
    const session = await insertSession(db, {
      userId: user.id,
      kind: scope.kind,
      twinId: scope.twinId ?? user.currentTwinId,
      ip: client.ip,
      userAgent: client.userAgent.slice(0, 512),
      expiresAt: new Date(Date.now() + TOKEN_LIFETIME_SECONDS * 1000),
    });
    const token = await tokens.sign({ userId: user.id, sessionId: session.id });
    if (scope.kind !== 'launch') return { token, profile: await profiles.load(user.id) };
    // A launch session has user rights in its twin only (behaviour 16): the profile says so too.
    const profile = await profiles.load(user.id, { twinId: session.twinId });
    return { token, profile: { ...profile, permissions: [] } };
  }

  /** Checks email and password; the failure never says which of the two was wrong. */
  async function checkCredentials(email: string, password: string): Promise<UserRow> {
    const user = await findUserByEmail(db, email);
    const valid = await verifyPassword(user?.passwordHash, password);
    if (!user || !valid) throw new UnauthorizedError(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS');
    if (user.status === 'inactive' || user.status === 'deleted') {
      throw new ForbiddenError('This account is inactive', 'ACCOUNT_INACTIVE');
    }
    return user;
  }

  /**
   * A visitor session of one twin (no account): the service names the visitor with a fresh id, kept in the
   * session's user_id, so each session is its own visitor. The embed route opens it after its own checks.
   */
  async function openVisitorSession(twinId: string, client: ClientInfo): Promise<{ token: string; visitorId: string }> {
    const twin = await findTwinById(db, twinId);
    if (!twin || twin.status !== 'active' || twin.deletedAt) throw new NotFoundError('Digital Twin not found');
    const visitorId = newId();
    const session = await insertSession(db, {
      userId: visitorId,
      kind: 'visitor',
      twinId: twin.id,
      ip: client.ip,
      userAgent: client.userAgent.slice(0, 512),
      expiresAt: new Date(Date.now() + TOKEN_LIFETIME_SECONDS * 1000),
    });
    return { token: await tokens.sign({ userId: visitorId, sessionId: session.id }), visitorId };
  }

  /** Whoever the token names, person or visitor (the auth guard's question). */
  function verifyCaller(token: string): Promise<Caller | null> {
    return cache.load(token, resolve);
  }

  /** The person the token names; a visitor's token is refused (sockets and other person-only entries). */
  async function verify(token: string): Promise<Actor | null> {
    const caller = await verifyCaller(token);
    return caller && !isVisitor(caller) ? caller : null;
  }

  async function resolve(token: string): Promise<Caller | null> {
    const claims = await tokens.verify(token);
    if (!claims) return null;
    const context = await findSessionContext(db, claims.sessionId, claims.userId);
    if (!context) {
      const visitor = await findVisitorSession(db, claims.sessionId, claims.userId);
      return visitor ? { kind: 'visitor', sessionId: claims.sessionId, visitorId: claims.userId, twinId: visitor.twinId } : null;
    }
    if (context.status === 'inactive' || context.status === 'deleted') return null;
    const launch = context.kind === 'launch' && context.sessionTwinId;
    const twinId = launch ? context.sessionTwinId : context.currentTwinId;
    // A launch session has user rights in its twin only, whatever the account's type (behaviour 16).
    const accountType = launch ? 'user' : context.accountType;
    const role = launch ? (context.role ? 'user' : null) : context.role;
    return {
      userId: context.userId,
      sessionId: context.sessionId,
      email: context.email,
      accountType,
      twinId,
      role,
      permissions: launch ? [] : permissionsFor(accountType, role ?? undefined, context.grants ?? []),
      launchScope: launch ? { twinId: context.sessionTwinId! } : null,
      mustChangePassword: context.mustChangePassword,
    };
  }

  return {
    openSession,
    openVisitorSession,
    checkCredentials,
    verify,
    verifyCaller,
    /** The caller of a token resolved in the last few seconds, without waiting (the guard's fast path). */
    peek: (token: string) => cache.peek(token),
    async signIn(email: string, password: string, client: ClientInfo): Promise<SignedIn> {
      const user = await checkCredentials(email, password);
      return openSession(user, client);
    },
    async signOut(actor: Caller): Promise<void> {
      await revokeSession(db, actor.sessionId);
      await cache.invalidate({ sessionIds: [actor.sessionId] });
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
