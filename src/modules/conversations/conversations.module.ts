// Wires the conversation routes: one model registry for the deployment and the context providers
// (memory and retrieval; empty until those modules fill them in), and runs the Socket.IO turns other
// processes hand over (turn-handoff.ts).
import { createModelRegistry, type DeploymentModelConfig } from '../../ai/registry.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import type { Outbound } from '../../platform/net/outbound.js';
import type { App } from '../../platform/http/schemas.js';
import { conversationRoutes } from './conversations.routes.js';
import { createConversationService } from './conversations.service.js';
import type { StreamRouter } from './socket-events.js';
import type { TurnDeps } from './run-turn.js';
import type { Price } from './turn-billing.js';
import type { TurnHandoff } from './turn-handoff.js';
import type { TurnToolDeps } from './turn-tools.js';
import type { PersonTabs } from '../../platform/realtime/person-tabs.js';
import { emptyContextProviders, type TurnContextProviders } from './turn-context.js';
import { cachedTurnReads, directTurnReads } from './turn-reads.js';
import { createTurnJournal } from './turn-journal.js';

export interface ConversationModuleDeps {
  db: Database;
  secrets: Pick<SecretBox, 'decrypt'>;
  deploymentModel: DeploymentModelConfig;
  /** The outbound guard a custom model's own baseUrl is reached through. */
  outbound: Outbound;
  /** The deployment endpoint's price (DEFAULT_PRICE_IN/OUT); free when absent. */
  deploymentPrice?: Price;
  streams: StreamRouter;
  /** Turns whose socket another process holds run there; this process runs theirs. */
  handoff: Pick<TurnHandoff, 'delegate' | 'serve'>;
  providers?: TurnContextProviders;
  /** Keeps the turn's cached reads true and is told of each turn's charge (turn-reads.ts, settleTurn). */
  changes?: Pick<ChangeFeed, 'committed' | 'catchUp' | 'subscribe' | 'caughtUp'>;
  /** SSE heartbeat interval in ms (SSE_HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** A connected twin's chat subscription as its model source (modules/subscription); absent: never. */
  subscriptionModel?: TurnDeps['subscriptionModel'];
  /** Connectors, approvals and built-in tools of turns (none when absent). */
  tools?: TurnToolDeps;
  /** APPROVAL_TIMEOUT_MS. */
  approvalTimeoutMs?: number;
  /** The person's tabs: a turn's SSE stream is one while open. */
  tabs?: Pick<PersonTabs, 'attachSse'>;
  /** This process (service_processes): written on the records it opens, so a crash's records are settled (turn-holds.ts). */
  processId?: string;
}

export function registerConversations(app: App, deps: ConversationModuleDeps): void {
  const models = createModelRegistry(deps.deploymentModel);
  const reads = deps.changes ? cachedTurnReads(deps.db, deps.changes) : directTurnReads(deps.db);
  // Bounds what a crash mid-answer loses: the opening flushed within 0.2 s, the answer so far saved every 2 s.
  const journal = createTurnJournal(deps.db, { processId: deps.processId, log: app.log });
  app.addHook('onClose', () => journal.close());
  const service = createConversationService({ ...deps, models, reads, providers: deps.providers ?? emptyContextProviders, log: app.log, journal });
  deps.handoff.serve((turn, signal) => service.answerHere(turn.actor, turn.body, signal));
  conversationRoutes(app, service);
}
