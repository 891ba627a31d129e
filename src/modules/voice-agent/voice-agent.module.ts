// Wires voice-agent mode in its own scope (its JSON parser keeps the raw body for the signature).
import type { Config } from '../../config.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import type { TurnToolDeps } from '../conversations/turn-tools.js';
import { voiceAgentRoutes } from './voice-agent.routes.js';
import { createVoiceAgentService } from './voice-agent.service.js';

export async function registerVoiceAgent(
  app: App,
  deps: { db: Database; bus: EventBus; tools: TurnToolDeps; config: Pick<Config, 'voiceAgent' | 'approvalTimeoutMs'> },
): Promise<void> {
  const service = await createVoiceAgentService({ db: deps.db, bus: deps.bus, tools: deps.tools, approvalTimeoutMs: deps.config.approvalTimeoutMs });
  app.addHook('onClose', () => service.close());
  await app.register(async (scope: App) => voiceAgentRoutes(scope, { db: deps.db, secret: deps.config.voiceAgent.secret, service }));
}
