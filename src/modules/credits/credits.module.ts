// Wires the credits family's admin routes (balances change through credits.service.ts and a turn's own
// statements). app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { createCreditsAdmin } from './credits.admin.service.js';
import { creditRoutes } from './credits.routes.js';

export function registerCredits(app: App, deps: { db: Database }): void {
  creditRoutes(app, createCreditsAdmin(deps.db));
}
