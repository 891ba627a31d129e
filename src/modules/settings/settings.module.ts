// Wires the settings family: a person's preferences. app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { settingsRoutes } from './settings.routes.js';
import { createSettingsService } from './settings.service.js';

export function registerSettings(app: App, deps: { db: Database }): void {
  settingsRoutes(app, createSettingsService(deps.db));
}
