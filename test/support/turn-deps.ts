// The one place tests build a turn's deps (TurnDeps, every member required) for calling the turn
// directly: the test app's database, secrets, change feed, connectors, approval gate and built-in tool
// runners, the model registry of the given endpoint, and no memory or retrieval unless given.
import { createModelRegistry, type DeploymentModelConfig } from '../../src/ai/registry.js';
import { createBuiltinToolRunners } from '../../src/modules/conversations/context-providers.js';
import { FREE } from '../../src/modules/conversations/turn-billing.js';
import { emptyContextProviders } from '../../src/modules/conversations/turn-context.js';
import { noSubscription, type TurnDeps } from '../../src/modules/conversations/turn-deps.js';
import { createSettleGroups } from '../../src/modules/conversations/settle-groups.js';
import { createTurnJournal } from '../../src/modules/conversations/turn-journal.js';
import { directTurnReads } from '../../src/modules/conversations/turn-reads.js';
import type { TestApp } from './app.js';

/** How long a directly called turn waits for an approval (the app's default). */
const APPROVAL_TIMEOUT_MS = 180_000;

export function turnDepsFor(t: TestApp, deploymentModel: DeploymentModelConfig, overrides: Partial<TurnDeps> = {}): TurnDeps {
  const database = t.platform.database;
  const db = database.db;
  const journal = createTurnJournal(db);
  return {
    db,
    secrets: t.platform.secrets,
    models: createModelRegistry(deploymentModel),
    deploymentModel,
    outbound: t.platform.outbound,
    deploymentPrice: FREE,
    providers: emptyContextProviders,
    log: { warn: () => {} },
    changes: t.app.changes,
    reads: directTurnReads(db),
    subscriptionModel: noSubscription,
    tools: { catalog: t.app.connectors, gate: t.app.approvals, builtins: createBuiltinToolRunners({ database, changes: t.app.changes }) },
    approvalTimeoutMs: APPROVAL_TIMEOUT_MS,
    // No process id: the records of these turns belong to no process the crash sweep watches.
    journal,
    settles: createSettleGroups(db, { inProgress: () => journal.inProgress, log: { warn: () => {} } }),
    ...overrides,
  };
}
