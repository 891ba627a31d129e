// Data access for administering accounts: scoped lists, memberships of many people, status changes.
import { and, desc, eq, exists, ilike, inArray, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Executor } from '../../platform/db/client.js';
import { twins, memberships } from '../twins/twins.tables.js';
import { users, type UserRow, type UserStatus } from '../users/users.tables.js';

export interface MembershipView {
  id: string;
  userId: string;
  twinId: string;
  name: string;
  role: 'user' | 'admin';
  permissions: string[];
}

/** `scope` 'all' or the twins the caller manages: people with a membership in one of them. */
export function inScope(scope: 'all' | string[], twinFilter?: string): SQL | undefined {
  const twinIds = twinFilter ? [twinFilter] : scope;
  if (twinIds === 'all') return undefined;
  return exists(
    sql`(select 1 from ${memberships} where ${memberships.userId} = ${users.id} and ${inArray(memberships.twinId, twinIds)})`,
  );
}

type ListFilter = { scope: 'all' | string[]; search?: string; twinId?: string; status?: UserStatus };

/** The people list's two statements (a page, the count of matches), unrun: bench/people-search-plan.ts explains them. */
export function peopleListQueries(db: Executor, filter: ListFilter, page: { offset: number; limit: number }) {
  const pattern = filter.search ? `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const where = and(
    isNull(users.deletedAt),
    inScope(filter.scope, filter.twinId),
    filter.status ? eq(users.status, filter.status) : undefined,
    pattern ? or(ilike(users.email, pattern), ilike(users.fname, pattern), ilike(users.lname, pattern)) : undefined,
  );
  return {
    rows: db.select().from(users).where(where).orderBy(desc(users.createdAt), desc(users.id)).offset(page.offset).limit(page.limit),
    count: db.select({ total: sql<number>`count(*)::int` }).from(users).where(where),
  };
}

/** Shortest search the trigram indexes (users.tables.ts) can answer: one trigram. */
export const TRIGRAM = 3;
/**
 * The planner's cost of an operator while a search is planned. Its default (0.0025) prices an ILIKE of a
 * UTF-8 text (both sides lowercased on each row) at about a twentieth of its time, and a trigram index
 * by its most frequent trigrams (a domain every account shares): it read every account for an exact
 * email, 30 ms where the index takes 1. At this cost a rare fragment takes the indexes and a fragment
 * most accounts match still reads the table, its faster way (docs/decisions.md, "People search").
 */
export const SEARCH_OPERATOR_COST = 0.05;

export async function listUsers(db: Executor, filter: ListFilter, page: { offset: number; limit: number }): Promise<{ rows: UserRow[]; total: number }> {
  if (!filter.search || filter.search.length < TRIGRAM) return readPeople(db, filter, page);
  return inTransaction(db, async (tx) => {
    await tx.execute(sql.raw(`set local cpu_operator_cost = ${SEARCH_OPERATOR_COST}`));
    const found = await readPeople(tx, filter, page);
    await tx.execute(sql`set local cpu_operator_cost to default`);
    return found;
  });
}

async function readPeople(db: Executor, filter: ListFilter, page: { offset: number; limit: number }): Promise<{ rows: UserRow[]; total: number }> {
  const queries = peopleListQueries(db, filter, page);
  const rows = await queries.rows;
  // A page neither full nor past the end holds the last matches: it tells the count without reading
  // every match again (an exact email, a rare name).
  if (rows.length < page.limit && (rows.length > 0 || page.offset === 0)) return { rows, total: page.offset + rows.length };
  const [count] = await queries.count;
  return { rows, total: count.total };
}

export async function findLiveUsers(db: Executor, ids: string[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(users).where(and(inArray(users.id, ids), isNull(users.deletedAt)));
}

/** Memberships of these people, with the twin's name; limited to `scope` unless 'all'. */
export async function membershipsOf(db: Executor, userIds: string[], scope: 'all' | string[]): Promise<MembershipView[]> {
  if (userIds.length === 0 || (scope !== 'all' && scope.length === 0)) return [];
  return db
    .select({
      id: memberships.id,
      userId: memberships.userId,
      twinId: memberships.twinId,
      name: twins.name,
      role: memberships.role,
      permissions: memberships.permissions,
    })
    .from(memberships)
    .innerJoin(twins, eq(twins.id, memberships.twinId))
    .where(and(inArray(memberships.userId, userIds), scope === 'all' ? undefined : inArray(memberships.twinId, scope)))
    .orderBy(memberships.createdAt);
}

/** Sets the status of these people where it differs; returns the ids that changed. */
export async function setStatus(db: Executor, ids: string[], status: 'active' | 'inactive'): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(users)
    .set({ status, version: sql`${users.version} + 1` })
    .where(and(inArray(users.id, ids), isNull(users.deletedAt), ne(users.status, status)))
    .returning({ id: users.id });
  return rows.map((row) => row.id);
}

/** Soft delete: the account is deactivated (status deleted) and its email freed for a new account. */
export async function softDeleteUsers(db: Executor, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(users)
    .set({ status: 'deleted', deletedAt: new Date(), version: sql`${users.version} + 1` })
    .where(and(inArray(users.id, ids), isNull(users.deletedAt)))
    .returning({ id: users.id });
  return rows.map((row) => row.id);
}

export async function updateMembershipRole(db: Executor, id: string, role: 'user' | 'admin'): Promise<void> {
  await db.update(memberships).set({ role }).where(eq(memberships.id, id));
}

/** The account whatever its state (the answer to a deletion shows the deleted row). */
export async function findAnyUser(db: Executor, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

