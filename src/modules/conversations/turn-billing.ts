// What a turn costs and how it is paid: prices in credits per 1,000 tokens (a custom model's own,
// DEFAULT_PRICE_IN/OUT for the deployment's endpoint, free unless the operator sets them; nothing for the
// built-in local model); what a priced turn holds while it runs (its most expensive possible cost); and
// the end of a turn: the charge, the hold given back and the history record's outcome together, and
// the change feed told of the balance row it charged (this process's caches must not show the old one).
import { eq, sql } from 'drizzle-orm';
import type { ChangeFeed, RowChange } from '../../platform/db/change-feed.js';
import { inTransaction, type Executor } from '../../platform/db/client.js';
import { balanceTable, spendable } from '../credits/credits.repo.js';
import { chargeCredits, InsufficientCreditsError } from '../credits/credits.service.js';
import type { CreditAccount } from '../credits/credits.tables.js';
import { finishRecord, finishValues, type FinishRecordInput } from '../history/history.records.js';
import { setHistoryCredits } from '../history/history.repo.js';
import type { HistoryRow } from '../history/history.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { extendRecordHold, finishAndCharge, type OpenedRecord } from './turn-record.repo.js';

export interface Price {
  inputPer1k: number;
  outputPer1k: number;
}

/** The built-in local model runs on the service itself and costs nothing. */
export const FREE: Price = { inputPer1k: 0, outputPer1k: 0 };

export const isPriced = (price: Price): boolean => price.inputPer1k > 0 || price.outputPer1k > 0;

/** Credits for the usage, rounded UP to the ledger's 6 decimals (a turn is never charged less than it used). */
export function costOf(usage: { inputTokens: number; outputTokens: number }, price: Price): number {
  const raw = (usage.inputTokens * price.inputPer1k + usage.outputTokens * price.outputPer1k) / 1000;
  if (raw <= 0) return 0;
  return Math.ceil(Number((raw * 1e6).toFixed(3))) / 1e6;
}

/**
 * What a turn's opening allows for the context it has not read yet (instructions, memories, passages,
 * earlier exchanges): when the prompt turns out larger, the turn holds the rest before the model is
 * called (extendHold), or is refused then.
 */
export const CONTEXT_ALLOWANCE_TOKENS = 2048;

/** What a turn holds: its prompt bound and its output limit at its price. */
export const holdOf = (inputTokens: number, outputTokens: number, price: Price): number => costOf({ inputTokens, outputTokens }, price);

export interface SettleInput {
  twin: Pick<TwinRow, 'id' | 'poolCredits'>;
  userId: string;
  /** What the usage costs; 0 for a failed turn. */
  cost: number;
  record: Omit<FinishRecordInput, 'credits'>;
  /** The record as the turn opened it (startRecord, extendHold): the settle starts from it, checking it is unchanged. */
  opened: Pick<OpenedRecord, 'id' | 'version' | 'heldCredits' | 'heldAccount'> & Parameters<typeof finishValues>[0];
  /** Told of the balance row a charge changed once committed (so `db` is never a caller's transaction). */
  changes?: Pick<ChangeFeed, 'committed'>;
}

/**
 * Charges the turn, gives back its hold and finishes its record together: one statement
 * (finishAndCharge) when the record is still as the turn opened it, else one transaction that locks the
 * record first (a record finished or changed meanwhile). Either way the charge is at most what the
 * balance holds for the turn plus what is spendable, under the balance's row lock: a balance never goes
 * below zero, and a turn whose cost is within its hold is always charged in full. The record keeps the
 * credits actually charged, and `changes` hears of the balance row charged as soon as it is committed.
 */
export async function settleTurn(db: Executor, input: SettleInput): Promise<{ credits: number }> {
  const outcome = finishValues(input.opened, { ...input.record, credits: 0 });
  const held = input.opened.heldAccount ? input.opened.heldCredits : 0;
  const account = input.opened.heldAccount ?? (input.twin.poolCredits ? 'institution' : 'user');
  const settled = await finishAndCharge(db, {
    record: { id: input.opened.id, version: input.opened.version },
    values: outcome.values,
    touchesConversation: outcome.touchesConversation,
    at: outcome.at,
    cost: input.cost,
    held,
    payer: { account, twinId: input.twin.id, userId: input.userId },
    ledgerMeta: { historyId: input.opened.id, cost: input.cost },
  });
  const done = settled ? { ...settled, account } : await settleInTransaction(db, input);
  // Only a charge is a change caches see: a hold given back sends no notice (migration 0010).
  if (done.credits > 0 && done.account) input.changes?.committed(balanceRow(done.account, input));
  return { credits: done.credits };
}

/** The row a balance lives in: the person's, or the twin's for a pool. */
function balanceRow(account: CreditAccount, input: Pick<SettleInput, 'twin' | 'userId'>): RowChange {
  return account === 'institution' ? { table: 'institutions', key: input.twin.id } : { table: 'users', key: input.userId };
}

/** The settle of a record no longer as opened: locked first (finishRecord gives back its hold), then the balance. */
async function settleInTransaction(db: Executor, input: SettleInput): Promise<{ credits: number; account?: CreditAccount }> {
  return inTransaction(db, async (tx) => {
    await finishRecord(tx, input.opened.id, { ...input.record, credits: 0 });
    if (input.cost <= 0) return { credits: 0 };
    const { account, balance } = await lockBalance(tx, input.twin, input.userId);
    const credits = Math.min(input.cost, Math.max(balance, 0));
    if (credits <= 0) return { credits: 0 };
    await chargeCredits(tx, {
      twinId: input.twin.id,
      // The balance just locked pays.
      account,
      userId: input.userId,
      amount: credits,
      reason: 'conversation.turn',
      meta: { historyId: input.opened.id, cost: input.cost },
    });
    await setHistoryCredits(tx, input.opened.id, credits);
    return { credits, account };
  });
}

/**
 * Holds `extra` more for a turn whose prompt is larger than its opening allowed for, before the model is
 * called: one statement, while the balance's spendable part covers it. Returns the record's new version
 * and hold; throws InsufficientCreditsError (402) when the balance cannot (the caller ends the turn).
 */
export async function extendHold(db: Executor, opened: Pick<OpenedRecord, 'id' | 'version' | 'heldCredits' | 'heldAccount' | 'twinId' | 'userId'>, extra: number) {
  const account = opened.heldAccount;
  if (!account || extra <= 0) return { version: opened.version, heldCredits: opened.heldCredits };
  const extended = await extendRecordHold(db, {
    recordId: opened.id,
    version: opened.version,
    account,
    balanceId: account === 'institution' ? opened.twinId : opened.userId,
    extra,
  });
  if (!extended) throw new InsufficientCreditsError(account);
  return extended;
}

export interface Balance {
  account: CreditAccount;
  /** What is spendable: the credits less what turns in progress hold. */
  balance: number;
}

/**
 * The balance that pays for a turn in this twin, row-locked (inside the transaction that charges), so
 * concurrent turns settle one after another.
 */
export async function lockBalance(db: Executor, twin: Pick<TwinRow, 'id' | 'poolCredits'>, userId: string): Promise<Balance> {
  const account: CreditAccount = twin.poolCredits ? 'institution' : 'user';
  const table = balanceTable(account);
  const [row] = await db
    .select({ spendable: sql<number>`${spendable(table)}::float8` })
    .from(table)
    .where(eq(table.id, twin.poolCredits ? twin.id : userId))
    .for('update');
  return { account, balance: row?.spendable ?? 0 };
}
