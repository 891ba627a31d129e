// Wires LTI 1.3: the platforms twin administrators register, and the login and launch a course page makes.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { Outbound } from '../../platform/net/outbound.js';
import type { AuthService } from '../auth/auth.service.js';
import { ltiChatPageRoute } from './lti-chat-page.js';
import { createPlatformKeys } from './lti-keys.js';
import { ltiLaunchRoutes } from './lti-launch.routes.js';
import { createLtiLaunchService } from './lti-launch.service.js';
import { ltiPlatformRoutes } from './lti-platforms.routes.js';
import { createLtiPlatformsService } from './lti-platforms.service.js';

export interface LtiDeps {
  db: Database;
  outbound: Outbound;
  publicUrl: string;
  auth: AuthService;
  startingCredits: number;
  /** The built web client, served framed by the twin's platforms at /lti/{publicId}. */
  webClientDir: string;
}

export function registerLti(app: App, deps: LtiDeps): void {
  ltiPlatformRoutes(app, createLtiPlatformsService({ db: deps.db, policy: deps.outbound.policy, publicUrl: deps.publicUrl }));
  const keys = createPlatformKeys(deps.outbound);
  const launchUrl = `${deps.publicUrl}/api/lti/launch`;
  ltiChatPageRoute(app, { db: deps.db, webClientDir: deps.webClientDir });
  ltiLaunchRoutes(app, createLtiLaunchService({ db: deps.db, auth: deps.auth, keys, launchUrl, startingCredits: deps.startingCredits }));
}
