// Wires the history family: a person's records and feedback, and the administrators' views. app.ts
// calls this once (the retention job is defined with the others in src/jobs.ts).
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { historyAdminRoutes } from './history.admin.routes.js';
import { createHistoryAdminService } from './history.admin.service.js';
import { historyRoutes } from './history.routes.js';
import { createHistoryService } from './history.service.js';

export function registerHistory(app: App, deps: { db: Database }): void {
  historyRoutes(app, createHistoryService(deps.db));
  historyAdminRoutes(app, createHistoryAdminService(deps.db));
}
