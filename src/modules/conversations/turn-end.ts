// The one way a turn's record ends, with its ledger beside it: the record finished, the real cost charged
// to the payer (credits/payer.ts), the hold given back and the ledger row written, together. A turn's
// settle, a turn that failed unexpectedly (uncharged) and the sweep of turns whose process died
// (turn-holds.ts) all end here. The common case is one statement (finishAndCharge, turn-record.repo.ts);
// a record changed after it opened (a tool call written on it, its owner deleting it) ends in one
// transaction that locks it first. Then the change feed hears of the balance row charged, so this
// process's caches never show the balance as it was before the charge.
import { eq, sql } from 'drizzle-orm';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import { inTransaction, type Executor } from '../../platform/db/client.js';
import { balanceTable, spendable } from '../credits/credits.repo.js';
import { chargeCredits } from '../credits/credits.service.js';
import { balanceIdOf, balanceRowOf, payerOf, type Payer } from '../credits/payer.js';
import { finishRecord, finishValues, type FinishRecordInput } from '../history/history.records.js';
import { setHistoryCredits } from '../history/history.repo.js';
import type { HistoryRow } from '../history/history.tables.js';
import type { SettleGroups } from './settle-groups.js';
import { finishAndCharge, type OneStatementSettle, type OpenedRecord } from './turn-record.repo.js';

export interface SettleInput {
  /** Whose balance pays (payerFor at admission): the one the record holds from, when it holds. */
  payer: Payer;
  /** What the usage costs; 0 for a failed turn. */
  cost: number;
  record: Omit<FinishRecordInput, 'credits'>;
  /** The record as the turn last knew it (opened, its hold extended): the settle checks it is unchanged. */
  opened: Pick<OpenedRecord, 'id' | 'version' | 'heldCredits' | 'heldAccount'> & Parameters<typeof finishValues>[0];
  /** Told of the balance row a charge changed once committed (so `db` is never a caller's transaction). */
  changes?: Pick<ChangeFeed, 'committed'>;
  /** A turn's own settle: one that moves no money may be written with others (`db` is then the database). */
  groups?: Pick<SettleGroups, 'settle'>;
}

/**
 * Charges the turn, gives back its hold and finishes its record together: one statement when the record
 * is still as the turn knew it, else one transaction that locks the record first. Either way the charge
 * is at most what the balance holds for the turn plus what is spendable, under the balance's row lock: a
 * balance never goes below zero, and a turn whose cost is within its hold is always charged in full. The
 * record keeps the credits actually charged.
 */
export async function settleTurn(db: Executor, input: SettleInput): Promise<{ credits: number }> {
  const outcome = finishValues(input.opened, { ...input.record, credits: 0 });
  const held = input.opened.heldAccount ? input.opened.heldCredits : 0;
  const settle: OneStatementSettle = {
    record: { id: input.opened.id, version: input.opened.version },
    values: outcome.values,
    touchesConversation: outcome.touchesConversation,
    at: outcome.at,
    cost: input.cost,
    held,
    payer: input.payer,
    ledgerMeta: { historyId: input.opened.id, cost: input.cost },
  };
  const settled = await (input.groups ? input.groups.settle(settle) : finishAndCharge(db, settle));
  const credits = settled ? settled.credits : await settleInTransaction(db, input);
  // Only a charge is a change caches see: a hold given back sends no notice (migration 0010).
  if (credits > 0) input.changes?.committed(balanceRowOf(input.payer));
  return { credits };
}

/** Ends a turn that failed unexpectedly: uncharged, its hold given back, the error on its record. */
export async function failTurn(db: Executor, opened: SettleInput['opened'], payer: Payer, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  await settleTurn(db, { payer, opened, cost: 0, record: { answer: '', status: 'failed', error: message } });
}

/**
 * Ends a streaming record nobody will settle (its process died, or it ran past any turn's length): failed,
 * with the answer saved so far, charging nothing, its hold given back. Whatever it holds now (no version:
 * the statement checks it still holds that and still streams); false when it ended meanwhile.
 */
export async function endAbandoned(db: Executor, record: HistoryRow, error: string, at: Date): Promise<boolean> {
  const outcome = finishValues(record, { answer: record.answer, status: 'failed', error, at });
  const held = record.heldAccount ? record.heldCredits : 0;
  const settled = await finishAndCharge(db, {
    record: { id: record.id },
    values: outcome.values,
    touchesConversation: outcome.touchesConversation,
    at: outcome.at,
    cost: 0,
    held,
    // With nothing held, no balance is touched: the account named then does not matter.
    payer: payerOf(record.heldAccount ?? 'user', record.twinId, record.userId),
    ledgerMeta: { historyId: record.id },
  });
  return settled !== undefined;
}

/** The settle of a record no longer as opened: locked first (finishRecord gives back its hold), then the balance. */
async function settleInTransaction(db: Executor, input: SettleInput): Promise<number> {
  return inTransaction(db, async (tx) => {
    await finishRecord(tx, input.opened.id, { ...input.record, credits: 0 });
    if (input.cost <= 0) return 0;
    const balance = await lockBalance(tx, input.payer);
    const credits = Math.min(input.cost, Math.max(balance, 0));
    if (credits <= 0) return 0;
    await chargeCredits(tx, {
      twinId: input.payer.twinId,
      // The balance just locked pays.
      account: input.payer.account,
      userId: input.payer.userId,
      amount: credits,
      reason: 'conversation.turn',
      meta: { historyId: input.opened.id, cost: input.cost },
    });
    await setHistoryCredits(tx, input.opened.id, credits);
    return credits;
  });
}

/**
 * What the payer's balance may spend, its row locked (inside the transaction that charges), so concurrent
 * turns settle one after another.
 */
async function lockBalance(db: Executor, payer: Payer): Promise<number> {
  const table = balanceTable(payer.account);
  const [row] = await db
    .select({ spendable: sql<number>`${spendable(table)}::float8` })
    .from(table)
    .where(eq(table.id, balanceIdOf(payer)))
    .for('update');
  return row?.spendable ?? 0;
}
