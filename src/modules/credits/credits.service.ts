// Credits: charging and awarding balances, each change in one short transaction with its ledger row.
// chargeCredits charges the payer (payer.ts: the twin's pool when the twin pools credits, else the
// person's own balance) and refuses a charge the spendable balance cannot cover. A turn is charged by its
// own one-statement settle (conversations/turn-record.repo.ts); only a turn whose record changed after it
// opened settles through chargeCredits (conversations/turn-end.ts).
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Executor } from '../../platform/db/client.js';
import { AppError, BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import type { CreditAccount } from './credits.tables.js';
import { creditTwin, creditUser, debitTwin, debitUser, insertLedger, readPoolSetting, setUserBalance } from './credits.repo.js';
import { payerFor, payerOf, type Payer } from './payer.js';

/** 402: the balance cannot cover the charge. Nothing was charged. */
export class InsufficientCreditsError extends AppError {
  constructor(readonly account: CreditAccount) {
    super(
      402,
      account === 'institution' ? "This Digital Twin's credit balance is too low" : 'Your credit balance is too low',
      'INSUFFICIENT_CREDITS',
      { account },
    );
  }
}

export interface ChargeInput {
  /** The twin the usage happened in; its poolCredits setting decides whose balance pays. */
  twinId: string | null;
  /** Whose balance pays, when the caller has already read the twin's setting (saves reading it again). */
  account?: CreditAccount;
  /** Who used the credits; null for a visitor of an embedded twin (its pool pays). */
  userId: string | null;
  amount: number;
  reason: string;
  actorId?: string | null;
  meta?: Record<string, unknown>;
}

export interface BalanceChange {
  account: CreditAccount;
  balance: number;
  ledgerId: string;
}

function checkAmount(amount: number): void {
  if (!Number.isFinite(amount) || amount <= 0) throw new BadRequestError('Amount must be a positive number', 'INVALID_AMOUNT');
}

/**
 * Charges `amount`: a single conditional UPDATE that applies only while the balance covers it, plus the
 * ledger row, in one transaction (the caller's, when `db` is one: the conversation engine settles a turn
 * in its own). Throws InsufficientCreditsError (402) when the balance does not cover it; the UPDATE then
 * matched nothing and no row was written, so the caller's transaction stays usable.
 */
export async function chargeCredits(db: Executor, input: ChargeInput): Promise<BalanceChange> {
  checkAmount(input.amount);
  return db instanceof PgTransaction ? charge(db, input) : db.transaction((tx) => charge(tx, input));
}

async function charge(tx: Executor, input: ChargeInput): Promise<BalanceChange> {
  const payer = await payerOfCharge(tx, input);
  const { account } = payer;
  const balance = account === 'institution' ? await debitTwin(tx, payer.twinId, input.amount) : await debitUser(tx, payer.userId, input.amount);
  if (balance === undefined) throw new InsufficientCreditsError(account);
  const entry = await insertLedger(tx, {
    twinId: input.twinId,
    account,
    userId: payer.userId,
    delta: -input.amount,
    balanceAfter: balance,
    reason: input.reason,
    actorId: input.actorId ?? null,
    meta: input.meta,
  });
  return { account, balance, ledgerId: entry.id };
}

/** The payer named by the charge, else by the twin's setting (payer.ts). */
async function payerOfCharge(tx: Executor, input: ChargeInput): Promise<Payer> {
  const { twinId, userId } = input;
  if (input.account === 'institution' && !twinId) throw new BadRequestError('A pooled charge needs its twin', 'INVALID_ACCOUNT');
  if (input.account) return payerOf(input.account, twinId, userId);
  const setting = twinId ? await readPoolSetting(tx, twinId) : undefined;
  if (twinId && setting && userId) return payerFor({ id: twinId, poolCredits: setting.poolCredits }, { kind: 'person', userId });
  // No person: a visitor's use, which the twin's pool pays.
  return payerOf(userId ? 'user' : 'institution', twinId, userId);
}

export interface AwardInput {
  account: CreditAccount;
  /** The twin credited (account 'institution') or the twin the award is made in (account 'user'). */
  twinId: string | null;
  /** The person credited (account 'user'). */
  userId?: string | null;
  amount: number;
  reason: string;
  actorId?: string | null;
  /** Count the amount as free credits granted (the twin's creditAward). */
  freeAward?: boolean;
  meta?: Record<string, unknown>;
}

/** Adds `amount` to a twin's pool or a person's balance, with its ledger row, in one transaction. */
export async function awardCredits(db: Executor, input: AwardInput): Promise<BalanceChange> {
  checkAmount(input.amount);
  return db.transaction(async (tx) => {
    const balance =
      input.account === 'institution'
        ? await creditTwin(tx, input.twinId ?? '', input.amount, input.freeAward ?? false)
        : await creditUser(tx, input.userId ?? '', input.amount);
    if (balance === undefined) throw new NotFoundError(input.account === 'institution' ? 'Institution not found' : 'User not found');
    const entry = await insertLedger(tx, {
      twinId: input.twinId,
      account: input.account,
      userId: input.userId ?? null,
      delta: input.amount,
      balanceAfter: balance,
      reason: input.reason,
      actorId: input.actorId ?? null,
      meta: input.meta,
    });
    return { account: input.account, balance, ledgerId: entry.id };
  });
}

/** An administrator sets a person's balance (PUT /api/admin/user): the ledger records the difference. */
export async function setUserCredits(
  db: Executor,
  input: { userId: string; credits: number; twinId: string | null; actorId: string; reason?: string },
): Promise<void> {
  if (!Number.isFinite(input.credits) || input.credits < 0) throw new BadRequestError('Credits cannot be negative', 'INVALID_AMOUNT');
  await db.transaction(async (tx) => {
    const change = await setUserBalance(tx, input.userId, input.credits);
    if (!change) throw new NotFoundError('User not found');
    if (change.before === change.after) return;
    await insertLedger(tx, {
      twinId: input.twinId,
      account: 'user',
      userId: input.userId,
      delta: change.after - change.before,
      balanceAfter: change.after,
      reason: input.reason ?? 'admin.set',
      actorId: input.actorId,
    });
  });
}
