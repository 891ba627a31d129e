// What a turn runs on, every member required: a kind of turn that does not use a part leaves it out of
// its own deps (a subagent's SubagentScene), rather than a member that is optional and changes what a
// turn does when absent. The module builds it once (conversations.module.ts); tests build it through
// test/support/turn-deps.ts.
import type { DeploymentModelConfig, ModelRegistry } from '../../ai/registry.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Database } from '../../platform/db/client.js';
import type { Outbound } from '../../platform/net/outbound.js';
import type { Price } from './turn-billing.js';
import type { TurnContextProviders } from './turn-context.js';
import type { SettleGroups } from './settle-groups.js';
import type { TurnJournal } from './turn-journal.js';
import type { TurnReads } from './turn-reads.js';
import type { TurnToolDeps } from './turn-tools.js';

/** A connected twin's chat subscription endpoint (modules/subscription); null: the deployment's endpoint. */
export type SubscriptionModelLookup = (twinId: string) => Promise<{ baseUrl: string; apiKey: string; model: string } | null>;

export interface TurnDeps {
  db: Database;
  secrets: Pick<SecretBox, 'decrypt'>;
  models: ModelRegistry;
  /** The deployment's endpoint (a custom model with a key but no base URL uses its base URL). */
  deploymentModel: DeploymentModelConfig;
  /** The outbound guard a custom model's own baseUrl is reached through (the deployment's endpoints are trusted). */
  outbound: Outbound;
  /** Its price in credits per 1,000 tokens (DEFAULT_PRICE_IN/OUT); FREE unless the operator sets one. */
  deploymentPrice: Price;
  /** Memory and retrieval (context-providers.ts); emptyContextProviders gives none. */
  providers: TurnContextProviders;
  log: { warn(details: object, message: string): void };
  /** Told of the balance row a turn's charge changed (turn-end.ts), before the transport says the turn is complete. */
  changes: Pick<ChangeFeed, 'committed'>;
  /** The twin and New Conversation (cached by the app: turn-reads.ts). */
  reads: TurnReads;
  subscriptionModel: SubscriptionModelLookup;
  /** Connectors, the approval gate and the built-in tools' runners (turn-tools.ts). */
  tools: TurnToolDeps;
  /** APPROVAL_TIMEOUT_MS: how long a chat turn waits for a decision. */
  approvalTimeoutMs: number;
  /** Bounds what a crash mid-answer loses (turn-journal.ts): the opening flushed soon, the answer so far saved. */
  journal: TurnJournal;
  /** Writes the settles that move no money together (settle-groups.ts). */
  settles: SettleGroups;
}

/** A twin never connected to a chat subscription. */
export const noSubscription: SubscriptionModelLookup = async () => null;
