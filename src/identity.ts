// Wires the identity route families: throttling (Redis when scaled), sign-in with second factors,
// passwords, launch tokens and the authenticator. app.ts calls identityRoutes once.
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { Platform } from './platform/platform.js';
import { TooManyRequestsError } from './platform/http/errors.js';
import type { App } from './platform/http/schemas.js';
import type { ProfileService } from './modules/users/profile.service.js';
import { adminSessionRoutes } from './modules/admin-sessions/admin-sessions.routes.js';
import { createAdminSessionsService } from './modules/admin-sessions/admin-sessions.service.js';
import { idpRevokeRoutes } from './modules/oauth/idp-revoke.routes.js';
import { createIdpRevokeService } from './modules/oauth/idp-revoke.service.js';
import { oauthRoutes } from './modules/oauth/oauth.routes.js';
import { ssoProviderRoutes } from './modules/oauth/sso-providers.routes.js';
import { createSsoProviderService } from './modules/oauth/sso-providers.service.js';
import { createOAuthService } from './modules/oauth/oauth.service.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import type { AuthService } from './modules/auth/auth.service.js';
import { createFactorService } from './modules/auth/factors.service.js';
import { createLaunchService } from './modules/auth/launch.service.js';
import { meRoutes } from './modules/auth/me.routes.js';
import { createPasswordService } from './modules/auth/password.service.js';
import type { SessionCache } from './modules/auth/session-cache.js';
import { createSignInService } from './modules/auth/signin.service.js';
import { createThrottle, DEFAULT_AUTH_LIMITS, type AuthLimits } from './modules/auth/throttle.js';
import { createTokenSigner } from './modules/auth/tokens.js';

export interface IdentityDeps extends Platform {
  /** Sign-in throttling; defaults in modules/auth/throttle.ts (tests set small numbers). */
  authLimits?: Partial<AuthLimits>;
  auth: AuthService;
  cache: SessionCache;
  profiles: ProfileService;
}

export async function identityRoutes(app: App, deps: IdentityDeps): Promise<void> {
  const { config, database, auth, cache, mailer, secrets } = deps;
  const db = database.db;
  const limits = { ...DEFAULT_AUTH_LIMITS, ...deps.authLimits };
  // Counters shared by every process when scaled.
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true }) : undefined;
  if (redis) {
    redis.on('error', (error: unknown) => app.log.error({ err: error }, 'rate-limit store error'));
    await redis.connect();
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect());
    });
  }
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
  const passwords = createPasswordService({
    db,
    cache,
    mailer,
    throttle,
    publicUrl: config.publicUrl,
    onError: (error) => app.log.error({ err: error }, 'password reset mail failed'),
  });
  const factors = createFactorService({ db, secrets, cache, throttle });
  const launch = createLaunchService({ db, auth, startingCredits: config.billing.startingCredits });

  authRoutes(app, { auth, signin, passwords, launch, requestsPerMinute: limits.requestsPerMinute });
  meRoutes(app, { factors, passwords, signin, requestsPerMinute: limits.requestsPerMinute });
  adminSessionRoutes(app, createAdminSessionsService({ db, cache }));
  const log = (error: unknown, message: string) => app.log.warn({ err: error }, message);
  const oauth = createOAuthService({ db, config, secrets, auth, signin, log });
  oauthRoutes(app, oauth, { publicUrl: config.publicUrl, requestsPerMinute: limits.requestsPerMinute });
  ssoProviderRoutes(app, createSsoProviderService({ db, secrets }));
  idpRevokeRoutes(app, createIdpRevokeService({ db, secrets, config, log }));
}
