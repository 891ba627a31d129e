// Wires the sign-in families (auth, oauth, admin sessions) with what they share: throttling (Redis when
// scaled) and the sign-in service. app.ts calls identityRoutes once.
import rateLimit from '@fastify/rate-limit';
import type { Platform } from './platform/platform.js';
import { TooManyRequestsError } from './platform/http/errors.js';
import type { App } from './platform/http/schemas.js';
import type { ProfileService } from './modules/users/profile.service.js';
import { registerAdminSessions } from './modules/admin-sessions/admin-sessions.module.js';
import { registerAuth } from './modules/auth/auth.module.js';
import type { AuthService } from './modules/auth/auth.service.js';
import { registerOauth } from './modules/oauth/oauth.module.js';
import type { SessionCache } from './modules/auth/session-cache.js';
import { createSignInService } from './modules/auth/signin.service.js';
import { createThrottle, DEFAULT_AUTH_LIMITS, type AuthLimits, type Throttle } from './modules/auth/throttle.js';
import { createTokenSigner } from './modules/auth/tokens.js';

export interface IdentityDeps extends Platform {
  /** Sign-in throttling; defaults in modules/auth/throttle.ts (tests set small numbers). */
  authLimits?: Partial<AuthLimits>;
  auth: AuthService;
  cache: SessionCache;
  profiles: ProfileService;
  /** Whether the web client is served: a provider's callback loaded as a page goes on to its /signin/oauth. */
  webClient: boolean;
}

/** Returns the sign-in throttle, which other confirmations of a password or code count against too. */
export async function identityRoutes(app: App, deps: IdentityDeps): Promise<{ throttle: Throttle }> {
  const { config, database, auth, cache, mailer, secrets } = deps;
  const db = database.db;
  const limits = { ...DEFAULT_AUTH_LIMITS, ...deps.authLimits };
  // Counters shared by every process when scaled, on the platform's one Redis connection (the bus's).
  const redis = deps.bus.redis;
  await app.register(rateLimit, {
    global: false,
    redis,
    nameSpace: `${limits.keyPrefix}rl:`,
    errorResponseBuilder: () => new TooManyRequestsError(),
  });

  const throttle = createThrottle(limits, redis);
  const signin = createSignInService({
    db,
    auth,
    throttle,
    mfaTokens: createTokenSigner(config.jwtSecret, 'mfa'),
    mailer,
    secrets,
    cache,
  });
  registerAuth(app, { db, config, mailer, secrets, auth, signin, cache, throttle, requestsPerMinute: limits.requestsPerMinute });
  registerOauth(app, { db, config, secrets, auth, signin, outbound: deps.outbound, requestsPerMinute: limits.requestsPerMinute, pageHandoff: deps.webClient });
  registerAdminSessions(app, { db, cache });
  return { throttle };
}
