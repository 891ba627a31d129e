// Data access for LTI platforms and login states. Platform reads for administrators are confined to
// the twins they are given; the launch side looks platforms up by issuer and client id.
import { and, asc, eq, gt, inArray, isNull, lt, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { ltiLoginStates, ltiPlatforms, type LtiLoginStateRow, type LtiPlatformRow } from './lti.tables.js';

export type NewLtiPlatform = typeof ltiPlatforms.$inferInsert;
const inOrder = [asc(ltiPlatforms.createdAt), asc(ltiPlatforms.id)] as const;

export async function listPlatforms(db: Executor, twins: 'all' | string[], page: { offset: number; limit: number }) {
  if (twins !== 'all' && twins.length === 0) return { rows: [], total: 0 };
  const where = twins === 'all' ? undefined : inArray(ltiPlatforms.twinId, twins);
  const rows = await db.select().from(ltiPlatforms).where(where).orderBy(...inOrder).offset(page.offset).limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(ltiPlatforms).where(where);
  return { rows, total: count.total };
}

/** Every platform of a twin (the launch page's frame-ancestors). */
export function platformsOfTwin(db: Executor, twinId: string): Promise<LtiPlatformRow[]> {
  return db.select().from(ltiPlatforms).where(eq(ltiPlatforms.twinId, twinId)).orderBy(...inOrder).limit(100);
}

/** The registrations of an issuer (of one client id when given), oldest first. */
export function platformsByIssuer(db: Executor, issuer: string, clientId?: string): Promise<LtiPlatformRow[]> {
  const where = and(eq(ltiPlatforms.issuer, issuer), clientId === undefined ? undefined : eq(ltiPlatforms.clientId, clientId));
  return db.select().from(ltiPlatforms).where(where).orderBy(...inOrder).limit(100);
}

export async function findPlatform(db: Executor, id: string): Promise<LtiPlatformRow | undefined> {
  const [row] = await db.select().from(ltiPlatforms).where(eq(ltiPlatforms.id, id)).limit(1);
  return row;
}

export async function findTwinRegistration(db: Executor, twinId: string, issuer: string, clientId: string, exceptId?: string) {
  const [row] = await db
    .select({ id: ltiPlatforms.id })
    .from(ltiPlatforms)
    .where(
      and(
        eq(ltiPlatforms.twinId, twinId),
        eq(ltiPlatforms.issuer, issuer),
        eq(ltiPlatforms.clientId, clientId),
        exceptId ? ne(ltiPlatforms.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  return row;
}

export async function insertPlatform(db: Executor, values: NewLtiPlatform): Promise<LtiPlatformRow> {
  const [row] = await db.insert(ltiPlatforms).values(values).returning();
  return row;
}

export async function updatePlatform(db: Executor, id: string, values: Partial<NewLtiPlatform>): Promise<LtiPlatformRow | undefined> {
  if (!setsSomething(values)) return findPlatform(db, id);
  const [row] = await db.update(ltiPlatforms).set(values).where(eq(ltiPlatforms.id, id)).returning();
  return row;
}

export async function deletePlatform(db: Executor, id: string): Promise<void> {
  await db.delete(ltiPlatforms).where(eq(ltiPlatforms.id, id));
}

export async function insertLoginState(db: Executor, values: typeof ltiLoginStates.$inferInsert): Promise<void> {
  await db.insert(ltiLoginStates).values(values);
}

/** Claims a state once: the row when it was unused and unexpired, and is now used. */
export async function claimLoginState(db: Executor, stateHash: string, now: Date): Promise<LtiLoginStateRow | undefined> {
  const [row] = await db
    .update(ltiLoginStates)
    .set({ usedAt: now })
    .where(and(eq(ltiLoginStates.stateHash, stateHash), isNull(ltiLoginStates.usedAt), gt(ltiLoginStates.expiresAt, now)))
    .returning();
  return row;
}

export async function findLoginState(db: Executor, by: { stateHash: string } | { nonceHash: string }): Promise<LtiLoginStateRow | undefined> {
  const where = 'stateHash' in by ? eq(ltiLoginStates.stateHash, by.stateHash) : eq(ltiLoginStates.nonceHash, by.nonceHash);
  const [row] = await db.select().from(ltiLoginStates).where(where).limit(1);
  return row;
}

/** Forgets states expired before `before` (a used one is kept until then, to tell a replay from a stranger). */
export async function deleteExpiredLoginStates(db: Executor, before: Date): Promise<void> {
  await db.delete(ltiLoginStates).where(lt(ltiLoginStates.expiresAt, before));
}
