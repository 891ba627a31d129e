// Wires the admin sessions family: administrators list and end people's sessions. src/identity.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { SessionCache } from '../auth/session-cache.js';
import { adminSessionRoutes } from './admin-sessions.routes.js';
import { createAdminSessionsService } from './admin-sessions.service.js';

export function registerAdminSessions(app: App, deps: { db: Database; cache: SessionCache }): void {
  adminSessionRoutes(app, createAdminSessionsService(deps));
}
