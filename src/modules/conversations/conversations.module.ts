// Wires the conversation routes: one model registry for the deployment and the context providers
// (memory and retrieval; empty until those modules fill them in).
import { createModelRegistry, type DeploymentModelConfig } from '../../ai/registry.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import { conversationRoutes } from './conversations.routes.js';
import { createConversationService } from './conversations.service.js';
import type { StreamRouter } from './socket-events.js';
import { emptyContextProviders, type TurnContextProviders } from './turn-context.js';

export interface ConversationModuleDeps {
  db: Database;
  secrets: Pick<SecretBox, 'decrypt'>;
  deploymentModel: DeploymentModelConfig;
  streams: StreamRouter;
  providers?: TurnContextProviders;
  /** Told when a turn has committed its charge (the SSE answer bypasses the route's fence). */
  changes?: Pick<ChangeFeed, 'fence'>;
  /** SSE heartbeat interval in ms (SSE_HEARTBEAT_MS). */
  heartbeatMs?: number;
}

export function registerConversations(app: App, deps: ConversationModuleDeps): void {
  const models = createModelRegistry(deps.deploymentModel);
  conversationRoutes(app, createConversationService({ ...deps, models, providers: deps.providers ?? emptyContextProviders, log: app.log }));
}
