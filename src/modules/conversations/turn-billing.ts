// What a turn costs and how it is paid: prices in credits per 1,000 tokens (a custom model's own,
// DEFAULT_PRICE for the deployment's endpoint, nothing for the built-in local model), and the end of a
// turn: the charge and the history record's outcome written in ONE transaction.
import type { Executor } from '../../platform/db/client.js';
import { chargeCredits } from '../credits/credits.service.js';
import { finishRecord, finishValues, type FinishRecordInput } from '../history/history.records.js';
import { setHistoryCredits, type OpenedRecord } from '../history/history.repo.js';
import type { HistoryRow } from '../history/history.tables.js';
import type { InstitutionRow } from '../institutions/institutions.tables.js';
import { finishAndCharge } from './settle.repo.js';
import { lockBalance } from './turn-limits.js';

export interface Price {
  inputPer1k: number;
  outputPer1k: number;
}

/** The deployment endpoint's price when no custom model names one: 1 credit per 1,000 tokens. */
export const DEFAULT_PRICE: Price = { inputPer1k: 1, outputPer1k: 1 };
/** The built-in local model runs on the service itself and costs nothing. */
export const FREE: Price = { inputPer1k: 0, outputPer1k: 0 };

export const isPriced = (price: Price): boolean => price.inputPer1k > 0 || price.outputPer1k > 0;

/** Credits for the usage, rounded UP to the ledger's 6 decimals (a turn is never charged less than it used). */
export function costOf(usage: { inputTokens: number; outputTokens: number }, price: Price): number {
  const raw = (usage.inputTokens * price.inputPer1k + usage.outputTokens * price.outputPer1k) / 1000;
  if (raw <= 0) return 0;
  return Math.ceil(Number((raw * 1e6).toFixed(3))) / 1e6;
}

export interface SettleInput {
  twin: Pick<InstitutionRow, 'id' | 'poolCredits'>;
  userId: string;
  /** What the usage costs; 0 for a failed turn. */
  cost: number;
  record: Omit<FinishRecordInput, 'credits'>;
  /** The record as the turn opened it (startRecord): the settle starts from it, checking it is unchanged. */
  opened: OpenedRecord;
}

/**
 * Charges the turn and finishes its record together: one statement (finishAndCharge) when the record is
 * still as the turn opened it, else one transaction that locks the record first (a record finished or
 * changed meanwhile). Either way the charge is min(cost, balance) under the balance's row lock: a
 * balance never goes below zero, even when several turns that all passed the pre-check end together.
 * The record keeps the credits actually charged.
 */
export async function settleTurn(db: Executor, input: SettleInput): Promise<{ row: HistoryRow; credits: number }> {
  const outcome = finishValues(input.opened, { ...input.record, credits: 0 });
  const settled = await finishAndCharge(db, {
    record: { id: input.opened.id, version: input.opened.version },
    values: outcome.values,
    touchesConversation: outcome.touchesConversation,
    at: outcome.at,
    cost: input.cost,
    payer: { account: input.twin.poolCredits ? 'institution' : 'user', institutionId: input.twin.id, userId: input.userId },
    ledgerMeta: { historyId: input.opened.id, cost: input.cost },
  });
  if (settled) return settled;
  return settleInTransaction(db, input);
}

/** The settle of a record no longer as opened: locked first, then the balance. */
async function settleInTransaction(db: Executor, input: SettleInput): Promise<{ row: HistoryRow; credits: number }> {
  return db.transaction(async (tx) => {
    const finished = await finishRecord(tx, input.opened.id, { ...input.record, credits: 0 });
    if (input.cost <= 0) return { row: finished, credits: 0 };
    const { account, balance } = await lockBalance(tx, input.twin, input.userId);
    const credits = Math.min(input.cost, Math.max(balance, 0));
    if (credits <= 0) return { row: finished, credits: 0 };
    await chargeCredits(tx, {
      institutionId: input.twin.id,
      // The balance just locked pays.
      account,
      userId: input.userId,
      amount: credits,
      reason: 'conversation.turn',
      meta: { historyId: input.opened.id, cost: input.cost },
    });
    await setHistoryCredits(tx, input.opened.id, credits);
    return { row: { ...finished, credits }, credits };
  });
}
