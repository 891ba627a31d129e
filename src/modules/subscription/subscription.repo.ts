// Data access for a twin's subscription connection. Every function takes the executor it runs on.
// The poll's claim is one conditional statement, so of several polls (tabs, processes) at most one
// reaches the provider per interval; token writes compare the token version, so of racing refreshes
// only one result is kept.
import { and, eq, isNotNull, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Executor } from '../../platform/db/client.js';
import { subscriptionConnections as connections, type SubscriptionConnectionRow } from './subscription.tables.js';

const PENDING_CLEARED = {
  pendingDeviceCodeSealed: null,
  pendingExpiresAt: null,
  pendingIntervalSeconds: null,
  pendingNextPollAt: null,
  pendingStartedBy: null,
} as const;

/**
 * SQL true when the twin named by `twinId` has a usable connection: tokens stored, no refused
 * refresh, and an access token still valid or a refresh token to renew it. The profile shows this.
 */
export function usableConnectionSql(twinId: AnyPgColumn | SQL): SQL<boolean> {
  return sql<boolean>`exists (select 1 from ${connections} where ${connections.twinId} = ${twinId}
    and ${connections.accessTokenSealed} is not null and ${connections.refreshFailedAt} is null
    and (${connections.tokenExpiresAt} is null or ${connections.tokenExpiresAt} > now() or ${connections.refreshTokenSealed} is not null))`;
}

export async function findConnection(db: Executor, twinId: string): Promise<SubscriptionConnectionRow | undefined> {
  const [row] = await db.select().from(connections).where(eq(connections.twinId, twinId)).limit(1);
  return row;
}

/** Stores a new pending sign-in, replacing any earlier one; a connection in place stays until it succeeds. */
export async function savePending(
  db: Executor,
  values: { twinId: string; deviceCodeSealed: string; expiresAt: Date; intervalSeconds: number; startedBy: string; now: Date },
): Promise<void> {
  const pending = {
    pendingDeviceCodeSealed: values.deviceCodeSealed,
    pendingExpiresAt: values.expiresAt,
    pendingIntervalSeconds: values.intervalSeconds,
    pendingNextPollAt: values.now,
    pendingStartedBy: values.startedBy,
  };
  await db
    .insert(connections)
    .values({ twinId: values.twinId, ...pending })
    .onConflictDoUpdate({ target: connections.twinId, set: { ...pending, updatedAt: values.now } });
}

/**
 * Claims the next poll of a pending, unexpired sign-in whose interval has passed: moves the next
 * allowed poll one interval on and returns the row; undefined when there is nothing to claim.
 */
export async function claimPoll(db: Executor, twinId: string, now: Date): Promise<SubscriptionConnectionRow | undefined> {
  const [row] = await db
    .update(connections)
    .set({ pendingNextPollAt: sql`${now.toISOString()}::timestamptz + make_interval(secs => ${connections.pendingIntervalSeconds})` })
    .where(
      and(
        eq(connections.twinId, twinId),
        isNotNull(connections.pendingDeviceCodeSealed),
        sql`${connections.pendingExpiresAt} > ${now.toISOString()}::timestamptz`,
        or(isNull(connections.pendingNextPollAt), lte(connections.pendingNextPollAt, now)),
      ),
    )
    .returning();
  return row;
}

/** The provider asked to slow down: the interval grows by 5 seconds (RFC 8628, 3.5), from now. */
export async function slowDown(db: Executor, twinId: string, deviceCodeSealed: string, now: Date): Promise<void> {
  await db
    .update(connections)
    .set({
      pendingIntervalSeconds: sql`${connections.pendingIntervalSeconds} + 5`,
      pendingNextPollAt: sql`${now.toISOString()}::timestamptz + make_interval(secs => ${connections.pendingIntervalSeconds} + 5)`,
    })
    .where(and(eq(connections.twinId, twinId), eq(connections.pendingDeviceCodeSealed, deviceCodeSealed)));
}

/** Drops the pending sign-in named (declined, expired); a newer one started meanwhile is left alone. */
export async function dropPending(db: Executor, twinId: string, deviceCodeSealed?: string): Promise<void> {
  const which = deviceCodeSealed ? eq(connections.pendingDeviceCodeSealed, deviceCodeSealed) : undefined;
  await db.update(connections).set(PENDING_CLEARED).where(and(eq(connections.twinId, twinId), which));
}

export interface SealedTokens {
  accessTokenSealed: string;
  refreshTokenSealed: string | null;
  tokenExpiresAt: Date | null;
  accountSealed: string | null;
}

/** The sign-in named succeeded: its tokens become the connection and the pending sign-in is done. False when it was replaced or dropped meanwhile. */
export async function completeSignIn(
  db: Executor,
  twinId: string,
  deviceCodeSealed: string,
  tokens: SealedTokens & { connectedBy: string | null; now: Date },
): Promise<boolean> {
  const { connectedBy, now, ...sealed } = tokens;
  const rows = await db
    .update(connections)
    .set({
      ...PENDING_CLEARED,
      ...sealed,
      connectedAt: now,
      connectedBy,
      refreshFailedAt: null,
      tokenVersion: sql`${connections.tokenVersion} + 1`,
    })
    .where(and(eq(connections.twinId, twinId), eq(connections.pendingDeviceCodeSealed, deviceCodeSealed)))
    .returning({ twinId: connections.twinId });
  return rows.length > 0;
}

/** Stores refreshed tokens if nobody changed them since `version` was read; returns the new row, else undefined. */
export async function saveRefreshed(
  db: Executor,
  twinId: string,
  version: number,
  tokens: Omit<SealedTokens, 'accountSealed'> & { accountSealed?: string | null },
): Promise<SubscriptionConnectionRow | undefined> {
  const [row] = await db
    .update(connections)
    .set({ ...tokens, tokenVersion: version + 1 })
    .where(and(eq(connections.twinId, twinId), eq(connections.tokenVersion, version), isNotNull(connections.accessTokenSealed)))
    .returning();
  return row;
}

/** The provider refused the refresh of tokens at `version`: the connection is not usable any more. */
export async function markRefreshFailed(db: Executor, twinId: string, version: number, now: Date): Promise<void> {
  await db
    .update(connections)
    .set({ refreshFailedAt: now })
    .where(and(eq(connections.twinId, twinId), eq(connections.tokenVersion, version)));
}

/** Drops the pending sign-in and the tokens: the row goes. Returns it (sealed), if there was one. */
export async function deleteConnection(db: Executor, twinId: string): Promise<SubscriptionConnectionRow | undefined> {
  const [row] = await db.delete(connections).where(eq(connections.twinId, twinId)).returning();
  return row;
}
