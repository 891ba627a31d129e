// Wires the auth family: sign-in with second factors, passwords, launch tokens and the signed-in
// person's own factors. src/identity.ts calls this once with the services the sign-in families share.
import type { Config } from '../../config.js';
import type { Database } from '../../platform/db/client.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { App } from '../../platform/http/schemas.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { authRoutes } from './auth.routes.js';
import type { AuthService } from './auth.service.js';
import { createFactorService } from './factors.service.js';
import { createLaunchService } from './launch.service.js';
import { meRoutes } from './me.routes.js';
import { createPasswordService } from './password.service.js';
import type { SessionCache } from './session-cache.js';
import type { SignInService } from './signin.service.js';
import type { Throttle } from './throttle.js';

export interface AuthModuleDeps {
  db: Database;
  config: Pick<Config, 'publicUrl' | 'billing'>;
  mailer: Mailer;
  secrets: SecretBox;
  auth: AuthService;
  signin: SignInService;
  cache: SessionCache;
  throttle: Throttle;
  requestsPerMinute: number;
}

export function registerAuth(app: App, deps: AuthModuleDeps): void {
  const { db, config, mailer, secrets, auth, signin, cache, throttle, requestsPerMinute } = deps;
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
  authRoutes(app, { auth, signin, passwords, launch, requestsPerMinute });
  meRoutes(app, { factors, passwords, signin, requestsPerMinute });
}
