// Wires the assistants family: seeds the system assistants, creates the services, registers the
// favorites loader with the profile service, the user routes and the admin routes. app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { ProfileService } from '../users/profile.service.js';
import { adminAssistantRoutes } from './admin-assistants.routes.js';
import { createAdminAssistantService } from './admin-assistants.service.js';
import { assistantRoutes } from './assistants.routes.js';
import { createAssistantService } from './assistants.service.js';
import { createFavoritesService } from './favorites.service.js';
import { ensureSystemAssistants } from './seed.js';

export async function registerAssistants(app: App, deps: { db: Database; profiles: ProfileService }): Promise<void> {
  await ensureSystemAssistants(deps.db);
  const service = createAssistantService(deps.db);
  const favorites = createFavoritesService(deps.db, service);
  deps.profiles.setFavoritesLoader(favorites.loader);
  assistantRoutes(app, service, favorites);
  adminAssistantRoutes(app, createAdminAssistantService(deps.db), service);
}
