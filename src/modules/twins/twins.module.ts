// Wires the twins family: Digital Twins, their settings and branding (admin). app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { twinRoutes } from './twins.routes.js';
import { createTwinsService } from './twins.service.js';

export function registerTwins(app: App, deps: { db: Database }): void {
  twinRoutes(app, createTwinsService(deps.db));
}
