// The refusals before a turn calls the model (behaviour 15): the twin's daily caps (per person, or per
// visitor, and for the whole twin, over the last 24 hours, counting history records that did not fail)
// and the hold on the balance that pays (credits/payer.ts). Nothing is charged by a refusal.
import { and, eq, gte, ne, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../platform/db/client.js';
import { AppError } from '../../platform/http/errors.js';
import { InsufficientCreditsError } from '../credits/credits.service.js';
import type { Payer } from '../credits/payer.js';
import { UnfundedOpeningError, type TurnHold } from './turn-record.repo.js';
import { history } from '../history/history.tables.js';
import { twins, type TwinRow } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

export const USAGE_LIMIT_MESSAGES = {
  user: 'You have reached your daily usage limit for this Digital Twin. Please try again later.',
  twin: 'This Digital Twin has reached its daily usage limit. Please try again later.',
} as const;

/** 429 USAGE_LIMIT_REACHED: a cap of the last 24 hours is used up. */
export class UsageLimitError extends AppError {
  constructor(scope: 'user' | 'twin', limit: number) {
    super(429, USAGE_LIMIT_MESSAGES[scope], 'USAGE_LIMIT_REACHED', { scope, limit });
  }
}

type Twin = Pick<TwinRow, 'id' | 'userDailyLimit' | 'twinDailyLimit'>;

/**
 * Admits a turn: checks the caps, then runs `start` (which writes the turn's record in one statement
 * that commits without waiting for its WAL flush: startRecord). For a twin with a cap, the checks and
 * the start run in one transaction under a per-twin transaction lock, so turns racing for the last slot
 * of a cap admit one at a time and the cap holds exactly; a twin without caps needs neither. A priced
 * turn (`holdAmount` above 0) holds that much of the balance that pays, taken by the opening statement
 * itself while the balance's spendable part covers it (`hold`): no read of the balance before it, and
 * no window between the check and the record. The settle charges the real cost and gives the rest back.
 */
export async function admitTurn<T>(
  db: Database,
  twin: Twin,
  /** Who asks: the person's id, or the visitor's (its records carry it as their user): the per-user cap counts theirs. */
  askerId: string,
  payer: Payer,
  holdAmount: number,
  start: (executor: Executor, hold: TurnHold | undefined) => Promise<T>,
): Promise<T> {
  const hold: TurnHold | undefined = holdAmount > 0 ? { account: payer.account, amount: holdAmount } : undefined;
  // 402 INSUFFICIENT_CREDITS before the model is called, when the balance cannot hold a priced turn.
  const open = (executor: Executor) =>
    start(executor, hold).catch((error: unknown) => {
      throw error instanceof UnfundedOpeningError ? new InsufficientCreditsError(error.account) : error;
    });
  if (twin.userDailyLimit === null && twin.twinDailyLimit === null) return open(db);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`turn-caps:${twin.id}`}))`);
    await checkUsageCaps(tx, twin, askerId);
    return open(tx);
  });
}

/** Throws UsageLimitError when the person's or the twin's turns of the last 24 hours reach a cap. */
export async function checkUsageCaps(db: Executor, twin: Twin, userId: string, now = new Date()): Promise<void> {
  const since = new Date(now.getTime() - DAY_MS);
  if (twin.userDailyLimit !== null) {
    const used = await countTurns(db, twin.id, since, userId);
    if (used >= twin.userDailyLimit) throw new UsageLimitError('user', twin.userDailyLimit);
  }
  if (twin.twinDailyLimit !== null) {
    const used = await countTurns(db, twin.id, since);
    if (used >= twin.twinDailyLimit) throw new UsageLimitError('twin', twin.twinDailyLimit);
  }
}

async function countTurns(db: Executor, twinId: string, since: Date, userId?: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(history)
    .where(
      and(
        eq(history.twinId, twinId),
        gte(history.createdAt, since),
        ne(history.status, 'failed'),
        userId ? eq(history.userId, userId) : undefined,
      ),
    );
  return row?.count ?? 0;
}
