// Wires the conversation routes: one model registry for the deployment, the turn's deps (TurnDeps,
// every member given), and runs the Socket.IO turns other processes hand over (turn-handoff.ts).
import { createModelRegistry, type DeploymentModelConfig } from '../../ai/registry.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import type { Outbound } from '../../platform/net/outbound.js';
import type { App } from '../../platform/http/schemas.js';
import { conversationRoutes } from './conversations.routes.js';
import { createConversationService } from './conversations.service.js';
import type { StreamRouter } from './socket-events.js';
import { noSubscription, type SubscriptionModelLookup, type TurnDeps } from './turn-deps.js';
import type { Price } from './turn-billing.js';
import type { TurnHandoff } from './turn-handoff.js';
import type { TurnToolDeps } from './turn-tools.js';
import type { PersonTabs } from '../../platform/realtime/person-tabs.js';
import type { TurnContextProviders } from './turn-context.js';
import { cachedTurnReads } from './turn-reads.js';
import { createSettleGroups } from './settle-groups.js';
import { createTurnJournal } from './turn-journal.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import type { AnswerLog } from '../../platform/realtime/open-stream-log.js';
import { createAnswerControl } from './answer-control.js';
import { createAnswerResume } from './answer-resume.js';
import { answerStreamRoutes } from './answer-stream.routes.js';

export interface ConversationModuleDeps {
  db: Database;
  secrets: Pick<SecretBox, 'decrypt'>;
  deploymentModel: DeploymentModelConfig;
  /** The outbound guard a custom model's own baseUrl is reached through. */
  outbound: Outbound;
  /** The deployment endpoint's price (DEFAULT_PRICE_IN/OUT; 0 each unless the operator sets them). */
  deploymentPrice: Price;
  streams: StreamRouter;
  /** Turns whose socket another process holds run there; this process runs theirs. */
  handoff: Pick<TurnHandoff, 'delegate' | 'serve'>;
  providers: TurnContextProviders;
  /** Keeps the turn's cached reads true and is told of each turn's charge (turn-reads.ts, turn-end.ts). */
  changes: Pick<ChangeFeed, 'committed' | 'catchUp' | 'subscribe' | 'caughtUp'>;
  /** SSE heartbeat interval in ms (SSE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** A connected twin's chat subscription as its model source (modules/subscription); null when the deployment has none. */
  subscriptionModel: SubscriptionModelLookup | null;
  /** Connectors, approvals and built-in tools of turns. */
  tools: TurnToolDeps;
  /** APPROVAL_TIMEOUT_MS. */
  approvalTimeoutMs: number;
  /** The person's tabs: a turn's SSE stream is one while open. */
  tabs: Pick<PersonTabs, 'attachSse'>;
  /** This process (service_processes): written on the records it opens, so a crash's records are settled (turn-holds.ts). */
  processId: string | undefined;
  /** Cancels and resumes of answers cross processes on it. */
  bus: EventBus;
  /** Every answer's frames, for resumes (platform/realtime/open-stream-log.ts). */
  streamLog: AnswerLog;
  /** RESUME_GRACE_SECONDS. */
  resumeGraceSeconds: number;
}

/** Registers the routes; answers the turn's deps, which another kind of turn (voice sessions) runs on. */
export async function registerConversations(app: App, deps: ConversationModuleDeps): Promise<{ turnDeps: TurnDeps }> {
  // Bounds what a crash mid-answer loses: the opening flushed within 0.2 s, the answer so far saved every 2 s.
  const journal = createTurnJournal(deps.db, { processId: deps.processId, log: app.log });
  // Settles that move no money are written together while other turns answer (settle-groups.ts).
  const settles = createSettleGroups(deps.db, { inProgress: () => journal.inProgress, log: app.log });
  app.addHook('onClose', () => settles.close().then(() => journal.close()));
  const control = await createAnswerControl(deps.bus, app.log);
  app.addHook('onClose', () => control.close());
  const serviceDeps = {
    ...deps,
    models: createModelRegistry(deps.deploymentModel),
    reads: cachedTurnReads(deps.db, deps.changes),
    subscriptionModel: deps.subscriptionModel ?? noSubscription,
    log: app.log,
    journal,
    settles,
    control,
  };
  const service = createConversationService(serviceDeps);
  deps.handoff.serve((turn, signal) => service.answerHere(turn.actor, turn.body, signal));
  conversationRoutes(app, service);
  const resume = createAnswerResume({ db: deps.db, streamLog: deps.streamLog, control, streams: deps.streams, heartbeatMs: deps.heartbeatMs });
  answerStreamRoutes(app, resume);
  deps.streams.serveResume((request, signal) => resume.resumeSocket({ id: request.userId, twinId: request.launchTwinId ?? undefined }, request.socketId, request.historyId, request.afterSeq, signal));
  return { turnDeps: serviceDeps };
}
