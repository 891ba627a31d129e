// What a turn costs and what it holds: prices in credits per 1,000 tokens (a custom model's own,
// DEFAULT_PRICE_IN/OUT for the deployment's endpoint, free unless the operator sets them; nothing for the
// built-in local model); what a priced turn holds while it runs (its most expensive possible cost), and
// the held record that holds more when the context or a subagent needs it. Its end is turn-end.ts.
import type { Executor } from '../../platform/db/client.js';
import { InsufficientCreditsError } from '../credits/credits.service.js';
import { balanceIdOf, type Payer } from '../credits/payer.js';
import { extendRecordHold, type OpenedRecord } from './turn-record.repo.js';

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

/**
 * Holds `extra` more for a turn whose prompt is larger than its opening allowed for, before the model is
 * called: one statement, while the balance's spendable part covers it. Returns the record's new version
 * and hold; throws InsufficientCreditsError (402) when the balance cannot (the caller ends the turn).
 */
async function extendHold(db: Executor, opened: Pick<OpenedRecord, 'id' | 'version' | 'heldCredits' | 'heldAccount'>, payer: Payer, extra: number) {
  const account = opened.heldAccount;
  if (!account || extra <= 0) return { version: opened.version, heldCredits: opened.heldCredits };
  const extended = await extendRecordHold(db, { recordId: opened.id, version: opened.version, account, balanceId: balanceIdOf(payer), extra });
  if (!extended) throw new InsufficientCreditsError(account);
  return extended;
}

/**
 * A turn's record while it streams, as the turn knows it: what it holds and its version, which the
 * settle checks. Holding more (the context larger than the opening allowed for, a subagent about to
 * run) goes through it, one extension at a time, each from the record's latest version.
 */
export class HeldRecord {
  readonly payer: Payer;
  readonly #db: Executor;
  #record: OpenedRecord;
  #extending: Promise<void> = Promise.resolve();

  constructor(db: Executor, opened: OpenedRecord, payer: Payer) {
    this.#db = db;
    this.#record = opened;
    this.payer = payer;
  }

  get record(): OpenedRecord {
    return this.#record;
  }

  /** Holds `extra` more; throws InsufficientCreditsError (402) when the balance cannot. */
  extend(extra: number): Promise<void> {
    const next = this.#extending.then(async () => {
      const extended = await extendHold(this.#db, this.#record, this.payer, extra);
      this.#record = { ...this.#record, ...extended };
    });
    this.#extending = next.catch(() => {});
    return next;
  }
}
