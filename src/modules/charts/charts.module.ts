// Wires the admin charts. app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { chartRoutes } from './charts.routes.js';
import { createChartsService } from './charts.service.js';

export function registerCharts(app: App, deps: { db: Database; now?: () => Date }): void {
  chartRoutes(app, createChartsService(deps.db, deps.now));
}
