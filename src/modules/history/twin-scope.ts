// Which twins an admin list or bulk action may touch: those where the caller holds a permission.
// Decided with the same rule as access.ts (permissionsFor): super admins everywhere, a twin's admins
// there, members where their membership grants it; a launch session nowhere (behaviour 16).
import { eq } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { memberships } from '../institutions/institutions.tables.js';
import { permissionsFor, type Permission } from '../users/permissions.js';
import type { TwinScope } from './history.repo.js';

export async function twinsWhere(db: Executor, actor: Actor, permission: Permission): Promise<TwinScope> {
  if (actor.launchScope) return { ids: [] };
  if (actor.accountType === 'super') return { all: true };
  const rows = await db
    .select({ institutionId: memberships.institutionId, role: memberships.role, permissions: memberships.permissions })
    .from(memberships)
    .where(eq(memberships.userId, actor.userId));
  const ids = rows
    .filter((row) => permissionsFor(actor.accountType, row.role, row.permissions).includes(permission))
    .map((row) => row.institutionId);
  return { ids };
}

export function isEmptyScope(scope: TwinScope): boolean {
  return 'ids' in scope && scope.ids.length === 0;
}
