// Wires the custom AI models family (user list and admin CRUD). app.ts calls this once.
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { OutboundPolicy } from '../../platform/net/outbound-guard.js';
import { customModelRoutes } from './custom-models.routes.js';
import { createCustomModelService } from './custom-models.service.js';

export function registerCustomModels(app: App, deps: { db: Database; secrets: SecretBox; policy: OutboundPolicy }): void {
  customModelRoutes(app, createCustomModelService(deps.db, deps.secrets, deps.policy));
}
