// Data access for entitlements; visibility for a twin administrator is "applies to one of my twins".
import { and, desc, eq, ilike, inArray, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { twins } from '../twins/twins.tables.js';
import { entitlements, type EntitlementRow } from './entitlements.tables.js';

export type NewEntitlement = typeof entitlements.$inferInsert;

/** Entitlements of these twins, directly or through the twins' account. */
export function appliesTo(twinIds: 'all' | string[]): SQL | undefined {
  if (twinIds === 'all') return undefined;
  if (twinIds.length === 0) return sql`false`;
  const accounts = sql`(select ${twins.accountId} from ${twins} where ${inArray(twins.id, twinIds)} and ${isNotNull(twins.accountId)})`;
  return or(inArray(entitlements.twinId, twinIds), sql`${entitlements.accountId} in ${accounts}`);
}

export async function listEntitlements(
  db: Executor,
  filter: { twins: 'all' | string[]; search?: string },
  page: { offset: number; limit: number },
): Promise<{ rows: EntitlementRow[]; total: number }> {
  const pattern = filter.search ? `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const where = and(appliesTo(filter.twins), pattern ? ilike(entitlements.name, pattern) : undefined);
  const rows = await db.select().from(entitlements).where(where).orderBy(desc(entitlements.createdAt), desc(entitlements.id)).offset(page.offset).limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(entitlements).where(where);
  return { rows, total: count.total };
}

export async function findEntitlement(db: Executor, id: string, twinIds: 'all' | string[]): Promise<EntitlementRow | undefined> {
  const [row] = await db.select().from(entitlements).where(and(eq(entitlements.id, id), appliesTo(twinIds))).limit(1);
  return row;
}

export async function insertEntitlement(db: Executor, values: NewEntitlement): Promise<EntitlementRow> {
  const [row] = await db.insert(entitlements).values(values).returning();
  return row;
}

export async function updateEntitlement(db: Executor, id: string, values: Partial<NewEntitlement>): Promise<EntitlementRow | undefined> {
  if (!setsSomething(values)) return findEntitlement(db, id, 'all');
  const [row] = await db.update(entitlements).set(values).where(eq(entitlements.id, id)).returning();
  return row;
}

export async function deleteEntitlements(db: Executor, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await db.delete(entitlements).where(inArray(entitlements.id, ids)).returning({ id: entitlements.id });
  return rows.length;
}

/** Active, unexpired entitlements that apply to one twin (directly or through its account). */
export async function activeEntitlementsOf(db: Executor, twinId: string): Promise<EntitlementRow[]> {
  return db
    .select()
    .from(entitlements)
    .where(and(appliesTo([twinId]), eq(entitlements.status, 'active'), sql`(${entitlements.expiresAt} is null or ${entitlements.expiresAt} > now())`));
}
