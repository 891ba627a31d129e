// The records of a voice session, through the turn's own admission and settle: each exchange (the
// person's words and the answer) is a history record of the session's conversation (`mode: "voice"`),
// opened like any turn's (the twin's caps, then a hold from the balance that pays: turn-limits.ts) and
// ended like any turn's (turn-end.ts: the real cost charged at RT_PRICE_*, the hold given back, the
// ledger row). The next exchange's record opens as one ends, so a cap reached or an empty balance ends
// the session then. A record nobody spoke into is removed at the end, its hold given back.
import { and, eq, notExists, sql } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Payer } from '../credits/payer.js';
import { finishRecord } from '../history/history.records.js';
import { conversations, history } from '../history/history.tables.js';
import { HeldRecord } from '../conversations/turn-billing.js';
import { settleTurn } from '../conversations/turn-end.js';
import { admitTurn } from '../conversations/turn-limits.js';
import { historyVersion, startRecord, type OpenedRecord } from '../conversations/turn-record.repo.js';
import type { ToolCallEntry, MemoryEntry } from '../history/history.tables.js';
import type { SubagentTally } from '../conversations/subagents.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { addUsage, costOfRt, holdForMinutes, HOLD_MINUTES, isPricedRt, NO_USAGE, recordUsageOf, type RtPrices, type RtUsage } from './rt-prices.js';

/** The title of a conversation a voice session opens. */
export const VOICE_CONVERSATION_TITLE = 'Voice call';

/** Who a session's records belong to and what they cost. */
export interface ExchangeScene {
  twin: Pick<TwinRow, 'id' | 'userDailyLimit' | 'twinDailyLimit'>;
  userId: string;
  payer: Payer;
  assistant: { id: string; name: string };
  model: string;
  prices: RtPrices;
  processId: string | undefined;
}

/** Opens an exchange's record as a turn opens its own: caps, the hold, the record, together (429, 402 otherwise). */
export async function openExchangeRecord(db: Database, scene: ExchangeScene, conversationId: string | null): Promise<OpenedRecord> {
  const hold = isPricedRt(scene.prices) ? holdForMinutes(HOLD_MINUTES, scene.prices) : 0;
  return admitTurn(db, scene.twin, scene.userId, scene.payer, hold, (executor, held) =>
    startRecord(executor, {
      twinId: scene.twin.id,
      userId: scene.userId,
      conversationId,
      assistantId: scene.assistant.id,
      assistantName: scene.assistant.name,
      question: '',
      mode: 'voice',
      title: VOICE_CONVERSATION_TITLE,
      models: [scene.model],
      hold: held,
      processId: scene.processId,
    }),
  );
}

/** A record opened elsewhere (the session route's process), taken over by the process that runs the session. */
export async function adoptRecord(db: Database, recordId: string, processId: string | undefined): Promise<OpenedRecord | undefined> {
  // process_id only (no updated_at change): the record's version stays what its settle will check.
  if (processId) await db.execute(sql`update history set process_id = ${processId} where id = ${recordId} and status = 'streaming'`);
  const [row] = await db.select({ record: history, version: historyVersion }).from(history).where(and(eq(history.id, recordId), eq(history.status, 'streaming')));
  return row ? { ...row.record, version: row.version } : undefined;
}

/**
 * Removes a record nobody spoke into (and its conversation when it holds nothing else): the hold is given
 * back first (finishRecord). A record something was written on (a tool call) stays, as failed.
 */
export async function dropUnusedRecord(db: Database, recordId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await finishRecord(tx, recordId, { answer: '', status: 'failed', error: 'The voice session ended before anything was said' });
    // Only an empty, uncharged record goes (one settled meanwhile stays as it is).
    if (row.status !== 'failed' || row.credits > 0 || row.toolCallCount > 0 || row.question !== '') return;
    await tx.delete(history).where(eq(history.id, recordId));
    const others = tx.select({ one: sql`1` }).from(history).where(eq(history.conversationId, row.conversationId));
    await tx.delete(conversations).where(and(eq(conversations.id, row.conversationId), notExists(others)));
  });
}

/** One exchange as the relay heard it. */
export interface ExchangeDraft {
  question: string;
  answer: string;
  usage: RtUsage;
  /** Something was said or called: the record is kept at the end. */
  used: boolean;
}

/** What the exchange's tools did: the connector calls, and what its subagents used (record and charge). */
export interface ExchangeTools {
  calls: ToolCallEntry[];
  tally: SubagentTally;
}

export const emptyDraft = (): ExchangeDraft => ({ question: '', answer: '', usage: NO_USAGE, used: false });

export interface ExchangeBookDeps {
  db: Database;
  changes: Pick<ChangeFeed, 'committed'>;
}

/**
 * The record open now and what the exchange under way has said so far (`draft`). The relay takes the
 * draft at once when an exchange ends (what is said next goes in a new one), then settles it here, one
 * settle at a time.
 */
export class ExchangeBook {
  draft: ExchangeDraft = emptyDraft();
  held: HeldRecord;
  readonly #deps: ExchangeBookDeps;
  readonly #scene: ExchangeScene;
  #closed = false;

  constructor(deps: ExchangeBookDeps, scene: ExchangeScene, opened: OpenedRecord) {
    this.#deps = deps;
    this.#scene = scene;
    this.held = new HeldRecord(deps.db, opened, scene.payer);
  }

  get recordId(): string {
    return this.held.record.id;
  }

  get conversationId(): string {
    return this.held.record.conversationId;
  }

  /** The exchange said so far, a new one begun. */
  takeDraft(): ExchangeDraft {
    const draft = this.draft;
    this.draft = emptyDraft();
    return draft;
  }

  addUsage(usage: RtUsage): void {
    this.draft.usage = addUsage(this.draft.usage, usage);
    this.draft.used = true;
  }

  /** Holds one more minute of talk on the record open now (402 INSUFFICIENT_CREDITS when the balance cannot). */
  holdAnotherMinute(): Promise<void> {
    return isPricedRt(this.#scene.prices) ? this.held.extend(holdForMinutes(1, this.#scene.prices)) : Promise.resolve();
  }

  /**
   * Ends the exchange's record (complete, charged) and opens the next one. Throws the next opening's
   * refusal (429 USAGE_LIMIT_REACHED, 402 INSUFFICIENT_CREDITS): the session ends then.
   */
  async next(draft: ExchangeDraft, tools: ExchangeTools, memories: MemoryEntry[]): Promise<{ credits: number }> {
    if (this.#closed) return { credits: 0 };
    const settled = await this.#settle(draft, 'complete', tools, memories);
    try {
      const opened = await openExchangeRecord(this.#deps.db, this.#scene, this.conversationId);
      this.held = new HeldRecord(this.#deps.db, opened, this.#scene.payer);
    } catch (error) {
      this.#closed = true;
      throw error;
    }
    return settled;
  }

  /** The session is over: an exchange under way is kept as cancelled (charged for what it used); an unused record goes. */
  async close(draft: ExchangeDraft, tools: ExchangeTools, memories: MemoryEntry[]): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (draft.used || tools.calls.length > 0 || tools.tally.entries.length > 0) await this.#settle(draft, draft.answer ? 'complete' : 'cancelled', tools, memories);
    else await dropUnusedRecord(this.#deps.db, this.recordId);
  }

  async #settle(draft: ExchangeDraft, status: 'complete' | 'cancelled', { calls, tally }: ExchangeTools, memories: MemoryEntry[]): Promise<{ credits: number }> {
    const usage = recordUsageOf(draft.usage);
    const toolCalls = [...calls, ...tally.calls];
    const subModels = tally.entries.map((entry) => entry.model ?? '').filter((model) => model && model !== this.#scene.model);
    return settleTurn(this.#deps.db, {
      payer: this.held.payer,
      opened: this.held.record,
      changes: this.#deps.changes,
      // What the subagents used is the exchange's too, as it is a chat turn's.
      cost: costOfRt(draft.usage, this.#scene.prices) + tally.cost,
      record: {
        question: draft.question.trim(),
        answer: draft.answer.trim(),
        status,
        usage: { inputTokens: usage.inputTokens + tally.usage.inputTokens, outputTokens: usage.outputTokens + tally.usage.outputTokens },
        models: [this.#scene.model, ...new Set(subModels)],
        memories,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(tally.entries.length > 0 ? { subagents: tally.entries } : {}),
      },
    });
  }
}
