// Wires LTI 1.3: the platforms twin administrators register, and the login and launch a course page makes.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { Outbound } from '../../platform/net/outbound.js';
import { ltiPlatformRoutes } from './lti-platforms.routes.js';
import { createLtiPlatformsService } from './lti-platforms.service.js';

export interface LtiDeps {
  db: Database;
  outbound: Outbound;
  publicUrl: string;
}

export function registerLti(app: App, deps: LtiDeps): void {
  ltiPlatformRoutes(app, createLtiPlatformsService({ db: deps.db, policy: deps.outbound.policy, publicUrl: deps.publicUrl }));
}
