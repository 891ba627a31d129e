// The tools a person's exchange offers, chat and voice alike: connectors with their approvals, opted-in
// built-ins, and `delegate`, whose subagents hold more on the exchange's record and add what they use to
// the tally (the record's settle charges it). One place, so a voice session offers what chat offers.
import type { Actor } from '../../platform/http/actor.js';
import type { NumberApprovalFrame } from '../approvals/approval-gate.js';
import type { ResolvedAssistant } from '../assistants/resolver.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { delegateRunner, type SubagentModel, type SubagentTally } from './subagents.js';
import type { HeldRecord } from './turn-billing.js';
import type { TurnDeps } from './turn-deps.js';
import { chooseModel } from './turn-model.js';
import { toolsForTurn, type TurnToolScene, type TurnTools } from './turn-tools.js';

export type PersonToolDeps = Pick<TurnDeps, 'db' | 'tools' | 'secrets' | 'models' | 'deploymentModel' | 'outbound' | 'deploymentPrice' | 'subscriptionModel'>;

export interface PersonToolScene {
  actor: Actor;
  twin: TwinRow;
  assistant: ResolvedAssistant;
  /** The exchange's record (its cards name it) and its hold, which subagents extend. */
  held: HeldRecord;
  modelKind: TurnToolScene['modelKind'];
  origin: TurnToolScene['origin'];
  approvalTimeoutMs: number;
  signal?: AbortSignal;
  numberApproval?: NumberApprovalFrame;
}

export async function personTools(deps: PersonToolDeps, scene: PersonToolScene, tally: SubagentTally): Promise<TurnTools> {
  const { actor, twin, assistant, held, signal, numberApproval } = scene;
  const record = held.record;
  const delegate =
    assistant.delegates.length > 0
      ? await delegateRunner(
          {
            db: deps.db,
            tools: deps.tools,
            actor,
            twin: { id: twin.id, toolsDisabled: twin.toolsDisabled, guardrails: twin.guardrailsEnabled ? twin.guardrailsText : '' },
            parentId: assistant.assistant.id,
            delegates: assistant.delegates,
            historyId: record.id,
            conversationId: record.conversationId,
            modelFor: async (sub): Promise<SubagentModel> => {
              const choice = await chooseModel(deps, twin.id, sub);
              return { resolved: choice.resolved, price: choice.price, outputLimit: choice.custom?.maxTokens ?? twin.maxCompletionTokens };
            },
            reserve: (extra) => held.extend(extra),
            signal,
            numberApproval,
          },
          tally,
        )
      : undefined;
  return toolsForTurn(deps.tools, {
    actor,
    twin,
    assistant,
    historyId: record.id,
    conversationId: record.conversationId,
    modelKind: scene.modelKind,
    origin: scene.origin,
    approvalTimeoutMs: scene.approvalTimeoutMs,
    signal,
    numberApproval,
    delegate,
  });
}
