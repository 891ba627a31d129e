// Which twins an administrator may act on for one permission: every twin for a super admin, otherwise
// the live twins where their membership is admin or carries the grant. Admin lists and bulk actions
// scope their rows with this; a launch session acts on none (behaviour 16).
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError } from '../../platform/http/errors.js';
import { institutions, memberships } from './institutions.tables.js';
import type { Permission } from '../../platform/http/permissions.js';

export async function twinsWhere(db: Executor, actor: Actor, permission: Permission): Promise<string[] | 'all'> {
  if (actor.launchScope) return [];
  if (isSuper(actor)) return 'all';
  const rows = await db
    .select({ id: memberships.institutionId })
    .from(memberships)
    .innerJoin(institutions, and(eq(institutions.id, memberships.institutionId), isNull(institutions.deletedAt)))
    .where(
      and(
        eq(memberships.userId, actor.userId),
        or(eq(memberships.role, 'admin'), sql`${memberships.permissions} @> ${JSON.stringify([permission])}::jsonb`),
      ),
    );
  return rows.map((row) => row.id);
}

export function inTwins(twins: string[] | 'all', institutionId: string | null): boolean {
  if (twins === 'all') return true;
  return institutionId !== null && twins.includes(institutionId);
}

/**
 * 403 when the caller holds the permission in no twin at all, as the admin lists and single-item
 * routes answer such a caller; a bulk action of someone who does hold it somewhere skips the ids
 * outside their twins and does not count them.
 */
export function requireSomeTwin(twins: string[] | 'all'): void {
  if (twins !== 'all' && twins.length === 0) throw new ForbiddenError('Not authorized', 'FORBIDDEN');
}
