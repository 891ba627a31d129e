// Who pays, in one place: a twin that pools credits pays for every turn in it from its pool; otherwise
// the person pays from their own balance; a visitor of an embedded twin (no account) is always paid for
// by the twin's pool. The turn's opening, hold extensions and settle, the crash sweep, the end of a
// record and chargeCredits all ask here, and map the payer to its balance row here.
import type { RowChange } from '../../platform/db/change-feed.js';
import type { TwinRow } from '../twins/twins.tables.js';
import type { CreditAccount } from './credits.tables.js';

/** Who uses the credits: a person (their account id) or a visitor of an embedded twin (no account). */
export type CreditUser = { kind: 'person'; userId: string } | { kind: 'visitor'; visitorId: string };

/**
 * The balance that pays and who used it. `userId` is the person the ledger names (null for a visitor:
 * the pool pays and no account used it); a person's own balance always names its person.
 */
export type Payer = { account: 'user'; twinId: string | null; userId: string } | { account: 'institution'; twinId: string; userId: string | null };

/** Does the twin's pool pay for its people's use? (its `poolCredits` setting) */
export const poolPays = (twin: Pick<TwinRow, 'poolCredits'>): boolean => twin.poolCredits;

/** The payer of a use of credits in `twin`: its pool when it pools credits or the user is a visitor, else the person. */
export function payerFor(twin: Pick<TwinRow, 'id' | 'poolCredits'>, user: CreditUser): Payer {
  if (user.kind === 'visitor') return { account: 'institution', twinId: twin.id, userId: null };
  return poolPays(twin) ? { account: 'institution', twinId: twin.id, userId: user.userId } : { account: 'user', twinId: twin.id, userId: user.userId };
}

/** The payer of a stored use (a turn's record, a charge that names its account): the account, the twin and the person. */
export function payerOf(account: CreditAccount, twinId: string | null, userId: string | null): Payer {
  if (account === 'institution') {
    if (!twinId) throw new Error("a twin's pool pays only within its twin");
    return { account, twinId, userId };
  }
  if (!userId) throw new Error("a person's balance pays only for a person");
  return { account, twinId, userId };
}

/** The id of the row that holds the payer's balance: the twin's (institutions) or the person's (users). */
export const balanceIdOf = (payer: Payer): string => (payer.account === 'institution' ? payer.twinId : payer.userId);

/** The balance row as the change feed names it (caches drop it when a charge commits). */
export const balanceRowOf = (payer: Payer): RowChange =>
  payer.account === 'institution' ? { table: 'institutions', key: payer.twinId } : { table: 'users', key: payer.userId };
