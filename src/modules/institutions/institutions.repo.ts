// Data access for twins and memberships.
import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { institutions, memberships, type InstitutionRow, type MembershipRow } from './institutions.tables.js';

export type NewInstitution = typeof institutions.$inferInsert;
export type NewMembership = typeof memberships.$inferInsert;

export async function findInstitutionById(db: Executor, id: string): Promise<InstitutionRow | undefined> {
  const [row] = await db
    .select()
    .from(institutions)
    .where(and(eq(institutions.id, id), isNull(institutions.deletedAt)))
    .limit(1);
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
