// Data access for memberships: a person's own with the twin, remove, pick the next twin to work in, and
// adding a person to a twin.
import { and, desc, eq, isNull, ne } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { institutions, memberships, type MembershipRow } from '../institutions/institutions.tables.js';

export interface MembershipWithTwin {
  id: string;
  role: 'user' | 'admin';
  permissions: string[];
  institution: { id: string; name: string; ainame: string; picture: string; status: 'active' | 'inactive' };
}

export async function listMembershipsWithTwins(db: Executor, userId: string): Promise<MembershipWithTwin[]> {
  return db
    .select({
      id: memberships.id,
      role: memberships.role,
      permissions: memberships.permissions,
      institution: {
        id: institutions.id,
        name: institutions.name,
        ainame: institutions.ainame,
        picture: institutions.picture,
        status: institutions.status,
      },
    })
    .from(memberships)
    .innerJoin(institutions, and(eq(institutions.id, memberships.institutionId), isNull(institutions.deletedAt)))
    .where(eq(memberships.userId, userId))
    .orderBy(memberships.createdAt, memberships.id);
}

export async function findMembershipById(db: Executor, id: string): Promise<MembershipRow | undefined> {
  const [row] = await db.select().from(memberships).where(eq(memberships.id, id)).limit(1);
  return row;
}

export async function deleteMembership(db: Executor, id: string): Promise<void> {
  await db.delete(memberships).where(eq(memberships.id, id));
}

/** The twin to work in after leaving one: the newest other membership of a live, active twin. */
export async function nextTwinFor(db: Executor, userId: string, leaving: string): Promise<string | null> {
  const [row] = await db
    .select({ id: institutions.id })
    .from(memberships)
    .innerJoin(institutions, eq(institutions.id, memberships.institutionId))
    .where(
      and(
        eq(memberships.userId, userId),
        ne(memberships.institutionId, leaving),
        isNull(institutions.deletedAt),
        eq(institutions.status, 'active'),
      ),
    )
    .orderBy(desc(memberships.createdAt), desc(memberships.id))
    .limit(1);
  return row?.id ?? null;
}

/** Adds the person to the twin with `role` unless already a member; true when added. */
export async function ensureMembership(db: Executor, institutionId: string, userId: string, role: 'user' | 'admin'): Promise<boolean> {
  const rows = await db.insert(memberships).values({ institutionId, userId, role }).onConflictDoNothing().returning({ id: memberships.id });
  return rows.length > 0;
}
