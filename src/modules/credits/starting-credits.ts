// A new account, whichever way it arrives (first admin, enrolment, third-party or launch sign-in): the
// person's row with the deployment's STARTING_CREDITS, and the ledger row that says where they came from.
import type { Executor } from '../../platform/db/client.js';
import { creditLedger } from './credits.tables.js';
import { insertUser, type NewUser } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';

export const STARTING_CREDITS_REASON = 'account.starting_credits';

/** Inserts the person with `startingCredits` (a ledger row when above zero), in the caller's transaction. */
export async function insertAccount(tx: Executor, values: Omit<NewUser, 'credits'>, startingCredits: number): Promise<UserRow> {
  const user = await insertUser(tx, { ...values, credits: startingCredits });
  if (startingCredits > 0) {
    await tx.insert(creditLedger).values({
      twinId: values.currentTwinId ?? null,
      account: 'user',
      userId: user.id,
      delta: startingCredits,
      balanceAfter: startingCredits,
      reason: STARTING_CREDITS_REASON,
    });
  }
  return user;
}
