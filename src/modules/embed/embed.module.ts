// Wires the embed family: the script and chat page a page embeds, its session and its guidance. app.ts calls this once.
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { AuthService } from '../auth/auth.service.js';
import { createLaunchService } from '../auth/launch.service.js';
import { embedPageRoutes } from './embed-page.routes.js';
import { embedRoutes } from './embed.routes.js';
import { createEmbedService } from './embed.service.js';

export interface EmbedModuleDeps {
  db: Database;
  auth: AuthService;
  startingCredits: number;
  /** EMBED_SESSIONS_PER_HOUR: sessions one address may open an hour. */
  sessionsPerHour: number;
}

export function registerEmbed(app: App, { db, auth, startingCredits, sessionsPerHour }: EmbedModuleDeps): void {
  const launch = createLaunchService({ db, auth, startingCredits });
  embedRoutes(app, createEmbedService({ db, auth, launch }), { sessionsPerHour });
  embedPageRoutes(app, db);
}
