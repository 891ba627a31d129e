// Data access for twins and memberships.
import { and, desc, eq, ilike, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { preparedOn } from '../../platform/db/prepared.js';
import { institutions, memberships, type InstitutionRow, type MembershipRow } from './institutions.tables.js';

export type NewInstitution = typeof institutions.$inferInsert;
export type NewMembership = typeof memberships.$inferInsert;

const institutionById = (db: Executor, id: unknown) =>
  db.select().from(institutions).where(and(eq(institutions.id, id as string), isNull(institutions.deletedAt))).limit(1);

/** Read on every turn and admin request: a prepared query outside transactions. */
export async function findInstitutionById(db: Executor, id: string): Promise<InstitutionRow | undefined> {
  const prepared = preparedOn(db, 'institution_by_id', (d) => institutionById(d, sql.placeholder('id')).prepare('institution_by_id'));
  const [row] = prepared ? await prepared.execute({ id }) : await institutionById(db, id);
  return row;
}

export async function insertInstitution(db: Executor, values: NewInstitution): Promise<InstitutionRow> {
  const [row] = await db.insert(institutions).values(values).returning();
  return row;
}

export async function findMembership(db: Executor, userId: string, institutionId: string): Promise<MembershipRow | undefined> {
  const [row] = await db
    .select()
    .from(memberships)
    .where(and(eq(memberships.institutionId, institutionId), eq(memberships.userId, userId)))
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

export async function findInstitutionByPublicId(db: Executor, publicId: string): Promise<InstitutionRow | undefined> {
  const [row] = await db
    .select()
    .from(institutions)
    .where(and(eq(institutions.publicId, publicId), isNull(institutions.deletedAt)))
    .limit(1);
  return row;
}

export async function updateInstitution(db: Executor, id: string, values: Partial<NewInstitution>): Promise<InstitutionRow | undefined> {
  if (!setsSomething(values)) return findInstitutionById(db, id);
  const [row] = await db
    .update(institutions)
    .set(values)
    .where(and(eq(institutions.id, id), isNull(institutions.deletedAt)))
    .returning();
  return row;
}

export async function listInstitutions(
  db: Executor,
  filter: { scope: 'all' | string[]; search?: string; status?: 'active' | 'inactive' },
  page: { offset: number; limit: number },
): Promise<{ rows: InstitutionRow[]; total: number }> {
  if (filter.scope !== 'all' && filter.scope.length === 0) return { rows: [], total: 0 };
  const pattern = filter.search ? `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const where = and(
    isNull(institutions.deletedAt),
    filter.scope === 'all' ? undefined : inArray(institutions.id, filter.scope),
    filter.status ? eq(institutions.status, filter.status) : undefined,
    pattern ? or(ilike(institutions.name, pattern), ilike(institutions.ainame, pattern)) : undefined,
  );
  const rows = await db
    .select()
    .from(institutions)
    .where(where)
    .orderBy(desc(institutions.createdAt), desc(institutions.id))
    .offset(page.offset)
    .limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(institutions).where(where);
  return { rows, total: count.total };
}

/** Sets the status where it differs; returns the ids that changed. */
export async function setInstitutionStatus(db: Executor, ids: string[], status: 'active' | 'inactive'): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(institutions)
    .set({ status })
    .where(and(inArray(institutions.id, ids), isNull(institutions.deletedAt), ne(institutions.status, status)))
    .returning({ id: institutions.id });
  return rows.map((row) => row.id);
}

/** Soft delete: the twin is deactivated and hidden; its data stays for audit and retention jobs. */
export async function softDeleteInstitutions(db: Executor, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(institutions)
    .set({ status: 'inactive', deletedAt: new Date() })
    .where(and(inArray(institutions.id, ids), isNull(institutions.deletedAt)))
    .returning({ id: institutions.id });
  return rows.map((row) => row.id);
}
