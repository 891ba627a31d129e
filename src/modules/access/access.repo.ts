// The reads the access rules need: a person's membership of a twin, the twins where they hold a
// permission, whether a twin is live. Plain SQL over `memberships` and `institutions`, because every
// route family calls requireAccess, so this module sits below all of them and imports no family's tables.
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import type { MembershipRole } from '../../platform/http/permissions.js';

export interface Membership {
  role: MembershipRole;
  permissions: string[];
}

async function rows<T>(db: Executor, query: SQL): Promise<T[]> {
  return ((await db.execute(query)) as unknown as { rows: T[] }).rows;
}

export async function findMembership(db: Executor, userId: string, twinId: string): Promise<Membership | undefined> {
  const [row] = await rows<Membership>(
    db,
    sql`select role, permissions from memberships where institution_id = ${twinId} and user_id = ${userId} limit 1`,
  );
  return row;
}

/** Twins where the person is an admin or holds the grant; live twins only unless `withDeleted`. */
export async function twinsGranting(db: Executor, userId: string, permission: string, withDeleted: boolean): Promise<string[]> {
  const live = withDeleted ? sql`` : sql` join institutions i on i.id = m.institution_id and i.deleted_at is null`;
  const found = await rows<{ id: string }>(
    db,
    sql`select m.institution_id as id from memberships m${live}
        where m.user_id = ${userId} and (m.role = 'admin' or m.permissions @> ${JSON.stringify([permission])}::jsonb)`,
  );
  return found.map((row) => row.id);
}

export async function isLiveTwin(db: Executor, twinId: string): Promise<boolean> {
  const found = await rows(db, sql`select 1 from institutions where id = ${twinId} and deleted_at is null limit 1`);
  return found.length > 0;
}

/** Does the person belong to one of these twins? */
export async function belongsToAny(db: Executor, userId: string, twins: 'all' | string[]): Promise<boolean> {
  if (twins !== 'all' && twins.length === 0) return false;
  const within = twins === 'all' ? sql`` : sql` and institution_id in (${sql.join(twins.map((id) => sql`${id}`), sql`, `)})`;
  const found = await rows(db, sql`select 1 from memberships where user_id = ${userId}${within} limit 1`);
  return found.length > 0;
}
