// Wires the institutions family: Digital Twins, their settings and branding (admin). app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { institutionRoutes } from './institutions.routes.js';
import { createInstitutionsService } from './institutions.service.js';

export function registerInstitutions(app: App, deps: { db: Database }): void {
  institutionRoutes(app, createInstitutionsService(deps.db));
}
