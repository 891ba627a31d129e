// What the conversation engine calls to keep history: a turn's outcome at its END (never per chunk;
// its start is conversations/turn-record.repo.ts), and the previous exchanges of a conversation for context.
// The engine runs these inside its own transactions; nothing here checks access (the engine has).
import { inTransaction, type Executor } from '../../platform/db/client.js';
import { releaseHold } from '../credits/credits.repo.js';
import { balanceIdOf, payerOf } from '../credits/payer.js';
import { detailCounts, retrievalMode, storableRetrieval } from './history.detail.js';
import { lockHistory, recentExchangeRows, touchConversation, updateHistory, type HistoryUpdate } from './history.repo.js';
import type { GuidanceEntry, HistoryRow, MemoryEntry, RetrievalEntry, SubagentEntry, ToolCallEntry } from './history.tables.js';

export interface FinishRecordInput {
  answer: string;
  /** Replaces the question the record opened with (a voice exchange learns it from the transcript). */
  question?: string;
  status: 'complete' | 'cancelled' | 'failed';
  error?: string | null;
  usage?: { inputTokens: number; outputTokens: number; reasoningTokens?: number };
  models?: string[];
  credits?: number;
  toolCalls?: ToolCallEntry[];
  subagents?: SubagentEntry[];
  /** Retrieval entries; confidential chunk text is cut to its preview before it is stored. */
  ragSearch?: RetrievalEntry[];
  /** Defaults to the mode of the entries. */
  ragSearchMode?: string | null;
  reasoning?: string | null;
  memories?: MemoryEntry[];
  /** The embedding page's guidance the turn followed. */
  guidance?: GuidanceEntry[];
  at?: Date;
}

export interface Exchange {
  historyId: string;
  question: string;
  answer: string;
  created: Date;
}

/**
 * Records the outcome of a turn and gives back what it held of the paying balance (it charges nothing:
 * the turn's settle does). Idempotent: a record already finished is returned unchanged. A record its
 * owner deleted while it streamed keeps only status, usage, models and credits.
 */
export async function finishRecord(db: Executor, id: string, input: FinishRecordInput): Promise<HistoryRow> {
  return inTransaction(db, async (tx) => {
    const current = await lockHistory(tx, id);
    if (!current) throw new Error(`History record ${id} does not exist`);
    if (current.status !== 'streaming') return current;
    const outcome = finishValues(current, input);
    const row = await updateHistory(tx, id, outcome.values);
    if (current.heldAccount && current.heldCredits > 0) {
      await releaseHold(tx, current.heldAccount, balanceIdOf(payerOf(current.heldAccount, current.twinId, current.userId)), current.heldCredits);
    }
    if (outcome.touchesConversation) await touchConversation(tx, row.twinId, row.conversationId, outcome.at);
    return row;
  });
}

export interface FinishValues {
  /** What the record's row becomes. */
  values: HistoryUpdate;
  /** A live record's end is its conversation's latest activity; a deleted one's is not. */
  touchesConversation: boolean;
  at: Date;
}

/**
 * The row a streaming record becomes when its turn ends (finishRecord's rule, also used by the turn's
 * one-statement settle): accounting always; answer and detail only while the record is not deleted,
 * detail not given keeping what was written during the turn (recordToolCall).
 */
export function finishValues(current: HistoryRow, input: FinishRecordInput): FinishValues {
  const at = input.at ?? new Date();
  const models = input.models ?? current.models;
  const inputTokens = input.usage?.inputTokens ?? 0;
  const outputTokens = input.usage?.outputTokens ?? 0;
  const reasoningTokens = input.usage?.reasoningTokens ?? 0;
  const credits = input.credits ?? 0;
  // The hold ends with the turn (whoever finishes it gives it back: finishRecord, the settle).
  if (current.deletedAt) return { values: { status: input.status, completedAt: at, models, inputTokens, outputTokens, reasoningTokens, credits, heldCredits: 0 }, touchesConversation: false, at };
  const toolCalls = input.toolCalls ?? current.toolCalls;
  const subagents = input.subagents ?? current.subagents;
  const ragSearch = storableRetrieval(input.ragSearch ?? current.ragSearch);
  const memories = input.memories ?? current.memories;
  const counts = detailCounts({ toolCalls, subagents, ragSearch, memories });
  // Written out rather than spread together: a turn's settle builds one of these every turn.
  const values: HistoryUpdate = {
    status: input.status,
    completedAt: at,
    models,
    inputTokens,
    outputTokens,
    reasoningTokens,
    credits,
    heldCredits: 0,
    answer: input.answer,
    error: input.error ?? null,
    toolCalls,
    subagents,
    ragSearch,
    memories,
    toolCallCount: counts.toolCallCount,
    subagentCount: counts.subagentCount,
    ragSearchCount: counts.ragSearchCount,
    memoryCount: counts.memoryCount,
    ragSearchMode: ragSearch.length > 0 ? retrievalMode(ragSearch, input.ragSearchMode) : (input.ragSearchMode ?? null),
    reasoning: input.reasoning ?? null,
  };
  if (input.question !== undefined) values.question = input.question;
  if (input.guidance && input.guidance.length > 0) values.guidance = input.guidance;
  return { values, touchesConversation: true, at };
}

/**
 * Writes one tool call on a record during the turn (replacing the entry with the same id), so a
 * decision on an approval card is on the message at once (behaviour 5), not only when the turn ends.
 * A record already finished or deleted is left alone.
 */
export async function recordToolCall(tx: Executor, id: string, entry: ToolCallEntry): Promise<HistoryRow | undefined> {
  const current = await lockHistory(tx, id);
  if (!current || current.status !== 'streaming' || current.deletedAt) return undefined;
  const exists = current.toolCalls.some((call) => call.id === entry.id);
  const toolCalls = exists ? current.toolCalls.map((call) => (call.id === entry.id ? entry : call)) : [...current.toolCalls, entry];
  return updateHistory(tx, id, { toolCalls, toolCallCount: toolCalls.length });
}

/**
 * The last `limit` finished exchanges of the person's conversation, oldest first (remember_history);
 * 'as-set': as many as the person's own Remember History count, read in the same statement.
 */
export async function recentExchanges(db: Executor, conversationId: string, userId: string, limit: number | 'as-set'): Promise<Exchange[]> {
  const rows = await recentExchangeRows(db, conversationId, userId, limit);
  return rows.map((row) => ({ historyId: row.id, question: row.question, answer: row.answer, created: row.createdAt }));
}
