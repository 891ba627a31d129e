// Data access for twins and memberships.
import { and, desc, eq, ilike, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { preparedOn } from '../../platform/db/prepared.js';
import { accounts } from './accounts.tables.js';
import { twins, memberships, type TwinRow, type MembershipRow } from './twins.tables.js';

export type NewTwin = typeof twins.$inferInsert;
export type NewMembership = typeof memberships.$inferInsert;

const twinById = (db: Executor, id: unknown) =>
  db.select().from(twins).where(and(eq(twins.id, id as string), isNull(twins.deletedAt))).limit(1);

/** Read on every turn and admin request: a prepared query outside transactions. */
export async function findTwinById(db: Executor, id: string): Promise<TwinRow | undefined> {
  const prepared = preparedOn(db, 'institution_by_id', (d) => twinById(d, sql.placeholder('id')).prepare('institution_by_id'));
  const [row] = prepared ? await prepared.execute({ id }) : await twinById(db, id);
  return row;
}

export async function insertTwin(db: Executor, values: NewTwin): Promise<TwinRow> {
  const [row] = await db.insert(twins).values(values).returning();
  return row;
}

export async function findMembership(db: Executor, userId: string, twinId: string): Promise<MembershipRow | undefined> {
  const [row] = await db
    .select()
    .from(memberships)
    .where(and(eq(memberships.twinId, twinId), eq(memberships.userId, userId)))
    .limit(1);
  return row;
}

export async function insertMembership(db: Executor, values: NewMembership): Promise<MembershipRow> {
  const [row] = await db.insert(memberships).values(values).returning();
  return row;
}

export async function listMembershipsOfUser(db: Executor, userId: string): Promise<MembershipRow[]> {
  return db.select().from(memberships).where(eq(memberships.userId, userId));
}

export async function findTwinByPublicId(db: Executor, publicId: string): Promise<TwinRow | undefined> {
  const [row] = await db
    .select()
    .from(twins)
    .where(and(eq(twins.publicId, publicId), isNull(twins.deletedAt)))
    .limit(1);
  return row;
}

export async function updateTwin(db: Executor, id: string, values: Partial<NewTwin>): Promise<TwinRow | undefined> {
  if (!setsSomething(values)) return findTwinById(db, id);
  const [row] = await db
    .update(twins)
    .set(values)
    .where(and(eq(twins.id, id), isNull(twins.deletedAt)))
    .returning();
  return row;
}

export async function listTwins(
  db: Executor,
  filter: { scope: 'all' | string[]; search?: string; status?: 'active' | 'inactive' },
  page: { offset: number; limit: number },
): Promise<{ rows: TwinRow[]; total: number }> {
  if (filter.scope !== 'all' && filter.scope.length === 0) return { rows: [], total: 0 };
  const pattern = filter.search ? `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const where = and(
    isNull(twins.deletedAt),
    filter.scope === 'all' ? undefined : inArray(twins.id, filter.scope),
    filter.status ? eq(twins.status, filter.status) : undefined,
    pattern ? or(ilike(twins.name, pattern), ilike(twins.ainame, pattern)) : undefined,
  );
  const rows = await db
    .select()
    .from(twins)
    .where(where)
    .orderBy(desc(twins.createdAt), desc(twins.id))
    .offset(page.offset)
    .limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(twins).where(where);
  return { rows, total: count.total };
}

/** Sets the status where it differs; returns the ids that changed. */
export async function setTwinStatus(db: Executor, ids: string[], status: 'active' | 'inactive'): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(twins)
    .set({ status })
    .where(and(inArray(twins.id, ids), isNull(twins.deletedAt), ne(twins.status, status)))
    .returning({ id: twins.id });
  return rows.map((row) => row.id);
}

/** Soft delete: the twin is deactivated and hidden; its data stays for audit and retention jobs. */
export async function softDeleteTwins(db: Executor, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(twins)
    .set({ status: 'inactive', deletedAt: new Date() })
    .where(and(inArray(twins.id, ids), isNull(twins.deletedAt)))
    .returning({ id: twins.id });
  return rows.map((row) => row.id);
}

/** Whether an account (accounts.tables.ts) exists: a twin may join only a real one. */
export async function accountExists(db: Executor, id: string): Promise<boolean> {
  const [row] = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, id)).limit(1);
  return Boolean(row);
}
