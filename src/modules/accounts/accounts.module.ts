// Wires the accounts family (super admins). app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { accountRoutes } from './accounts.routes.js';
import { createAccountsService } from './accounts.service.js';

export function registerAccounts(app: App, deps: { db: Database }): void {
  accountRoutes(app, createAccountsService(deps.db));
}
