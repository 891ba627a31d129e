// Data access for memberships: a person's own with the twin, remove, pick the next twin to work in, and
// adding a person to a twin.
import { and, desc, eq, isNull, ne } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { twins, memberships, type MembershipRow } from '../twins/twins.tables.js';

export interface MembershipWithTwin {
  id: string;
  role: 'user' | 'admin';
  permissions: string[];
  twin: { id: string; name: string; ainame: string; picture: string; status: 'active' | 'inactive' };
}

export async function listMembershipsWithTwins(db: Executor, userId: string): Promise<MembershipWithTwin[]> {
  return db
    .select({
      id: memberships.id,
      role: memberships.role,
      permissions: memberships.permissions,
      twin: {
        id: twins.id,
        name: twins.name,
        ainame: twins.ainame,
        picture: twins.picture,
        status: twins.status,
      },
    })
    .from(memberships)
    .innerJoin(twins, and(eq(twins.id, memberships.twinId), isNull(twins.deletedAt)))
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
    .select({ id: twins.id })
    .from(memberships)
    .innerJoin(twins, eq(twins.id, memberships.twinId))
    .where(
      and(
        eq(memberships.userId, userId),
        ne(memberships.twinId, leaving),
        isNull(twins.deletedAt),
        eq(twins.status, 'active'),
      ),
    )
    .orderBy(desc(memberships.createdAt), desc(memberships.id))
    .limit(1);
  return row?.id ?? null;
}

/** Adds the person to the twin with `role` unless already a member; true when added. */
export async function ensureMembership(db: Executor, twinId: string, userId: string, role: 'user' | 'admin'): Promise<boolean> {
  const rows = await db.insert(memberships).values({ twinId, userId, role }).onConflictDoNothing().returning({ id: memberships.id });
  return rows.length > 0;
}
