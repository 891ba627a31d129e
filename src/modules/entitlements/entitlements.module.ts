// Wires the entitlements family (admin). app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { entitlementRoutes } from './entitlements.routes.js';
import { createEntitlementsService } from './entitlements.service.js';

export function registerEntitlements(app: App, deps: { db: Database }): void {
  entitlementRoutes(app, createEntitlementsService(deps.db));
}
