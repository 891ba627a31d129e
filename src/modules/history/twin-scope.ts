// The twins an admin history view may touch, in the shape the history queries take.
// The rule itself lives in users/admin-twins.ts, shared by every admin family.
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { twinsWhere as adminTwins } from '../institutions/admin-twins.js';
import type { Permission } from '../../platform/http/permissions.js';
import type { TwinScope } from './history.repo.js';

export async function twinsWhere(db: Executor, actor: Actor, permission: Permission): Promise<TwinScope> {
  const twins = await adminTwins(db, actor, permission);
  return twins === 'all' ? { all: true } : { ids: twins };
}

export function isEmptyScope(scope: TwinScope): boolean {
  return 'ids' in scope && scope.ids.length === 0;
}
