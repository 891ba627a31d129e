// The turn's last phase, settle: the record ends with what the run produced (turn-end.ts: the charge for
// real usage, the hold given back and the ledger row, together; a failed run is not charged, a cancelled
// one pays for its partial answer), then long-term memory extraction is queued, not awaited.
import type { TurnDeps } from './turn-deps.js';
import { settleTurn } from './turn-end.js';
import type { AdmittedTurn } from './turn-phase-admit.js';
import type { TurnContext } from './turn-phase-context.js';
import type { RunOutcome, TurnResult } from './turn-types.js';

export async function settle(deps: TurnDeps, turn: AdmittedTurn, context: TurnContext, outcome: RunOutcome): Promise<TurnResult> {
  const { held } = turn;
  const record = held.record;
  const status = outcome.failed ? 'failed' : outcome.cancelled ? 'cancelled' : 'complete';
  const { credits } = await settleTurn(deps.db, {
    payer: held.payer,
    opened: record,
    changes: deps.changes,
    groups: deps.settles,
    cost: outcome.failed ? 0 : outcome.cost,
    record: {
      answer: outcome.text,
      status,
      error: outcome.failed?.message ?? null,
      usage: outcome.usage,
      models: outcome.models,
      memories: context.memories,
      ragSearch: context.passages,
      guidance: context.guidance,
      // Detail not given keeps what was written on the record during the turn.
      ...(outcome.toolCalls.length > 0 ? { toolCalls: outcome.toolCalls } : {}),
      ...(outcome.subagents.length > 0 ? { subagents: outcome.subagents } : {}),
    },
  });
  if (status === 'complete' && !outcome.emptyReply && deps.providers.afterTurn) {
    // Not awaited: the answer is complete. A provider logs its own failures.
    const turnDone = { historyId: record.id, question: turn.question, answer: outcome.text };
    deps.providers.afterTurn(turn.caller, turnDone, { longTermMemoryEnabled: turn.twin.longTermMemoryEnabled }).catch(() => {});
  }
  const { usage } = outcome;
  return {
    answer: outcome.text,
    usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
    credits,
    historyId: record.id,
    conversationId: record.conversationId,
    cancelled: outcome.cancelled,
    emptyReply: outcome.emptyReply,
    ...(outcome.failed ? { failed: outcome.failed } : {}),
  };
}
