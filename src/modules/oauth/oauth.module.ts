// Wires the oauth family: third-party sign-in (OpenID Connect), twins' SSO providers and the
// institution token revoke. src/identity.ts calls this once with the services the sign-in families share.
import type { App } from '../../platform/http/schemas.js';
import { idpRevokeRoutes } from './idp-revoke.routes.js';
import { createIdpRevokeService } from './idp-revoke.service.js';
import { oauthRoutes } from './oauth.routes.js';
import { createOAuthService, type OAuthServiceDeps } from './oauth.service.js';
import { ssoProviderRoutes } from './sso-providers.routes.js';
import { createSsoProviderService } from './sso-providers.service.js';

export function registerOauth(app: App, deps: Omit<OAuthServiceDeps, 'log'> & { requestsPerMinute: number; pageHandoff: boolean }): void {
  const log = (error: unknown, message: string) => app.log.warn({ err: error }, message);
  const { db, config, secrets, outbound } = deps;
  oauthRoutes(app, createOAuthService({ ...deps, log }), { publicUrl: config.publicUrl, requestsPerMinute: deps.requestsPerMinute, secrets, pageHandoff: deps.pageHandoff });
  ssoProviderRoutes(app, createSsoProviderService({ db, secrets, policy: outbound.policy }));
  idpRevokeRoutes(app, createIdpRevokeService({ db, secrets, config, outbound, log }));
}
