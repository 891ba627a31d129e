// Who may administer whom (behaviour 3). An account is visible to an administrator when it belongs to a
// twin where they hold users.list; otherwise it answers as not found. Editing needs the permission on the
// account's current twin (the caller's own twin when it has none); super accounts are for supers only.
import type { Executor } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { findInstitutionById } from '../institutions/institutions.repo.js';
import { hasPermission, isMemberOf, managedInstitutionIds, permissionsIn } from '../institutions/access.js';
import type { Permission } from '../../platform/http/permissions.js';
import { findUserById } from '../users/users.repo.js';
import type { AccountType, UserRow } from '../users/users.tables.js';
import { membershipsOf } from './admin-users.repo.js';

export const USER_NOT_FOUND = 'User not found';
export const SUPER_ONLY_EDIT = 'Only a super admin can edit a super admin';
export const SUPER_ONLY_ASSIGN = 'Only a super admin can assign the super role';

const RANK: Record<AccountType, number> = { user: 0, admin: 1, super: 2 };
export const outranks = (a: AccountType, b: AccountType) => RANK[a] > RANK[b];

/** Twins whose people the caller may see: 'all' for a super admin. */
export function visibleScope(db: Executor, actor: Actor): Promise<'all' | string[]> {
  return managedInstitutionIds(db, actor, 'users.list');
}

/** The live account, when the caller may see it; 404 otherwise (never leaks another twin's people). */
export async function loadVisibleUser(db: Executor, actor: Actor, userId: string): Promise<UserRow> {
  const user = await findUserById(db, userId);
  if (!user) throw new NotFoundError(USER_NOT_FOUND);
  if (isSuper(actor)) return user;
  const scope = await visibleScope(db, actor);
  if ((await membershipsOf(db, [user.id], scope)).length === 0) throw new NotFoundError(USER_NOT_FOUND);
  return user;
}

/** Memoised permission look-ups for one request (bulk actions check many rows). */
export function permissionChecker(db: Executor, actor: Actor) {
  const cache = new Map<string, Promise<Permission[]>>();
  return (institutionId: string, permission: Permission) => {
    if (!cache.has(institutionId)) cache.set(institutionId, permissionsIn(db, actor, institutionId));
    return cache.get(institutionId)!.then((held) => held.includes(permission));
  };
}

/** Why the caller may not act on this (visible) account, or null when they may. */
export async function refusalOnAccount(
  actor: Actor,
  target: UserRow,
  permission: Permission,
  holds: (institutionId: string, permission: Permission) => Promise<boolean>,
): Promise<ForbiddenError | null> {
  if (isSuper(actor)) return null;
  if (target.accountType === 'super') return new ForbiddenError(SUPER_ONLY_EDIT, 'SUPER_ONLY');
  const twin = target.currentInstitutionId ?? actor.institutionId;
  if (!twin || !(await holds(twin, permission))) return new ForbiddenError('Not authorized', 'FORBIDDEN');
  return null;
}

export async function requireOnAccount(db: Executor, actor: Actor, target: UserRow, permission: Permission): Promise<void> {
  const refusal = await refusalOnAccount(actor, target, permission, permissionChecker(db, actor));
  if (refusal) throw refusal;
}

/**
 * The caller needs `permission` in a twin named in a body (create into, move to). A twin that does
 * not exist, or one the caller does not belong to, answers 404; a member without the permission 403.
 */
export async function requireOnTwin(db: Executor, actor: Actor, institutionId: string, permission: Permission): Promise<void> {
  const twin = await findInstitutionById(db, institutionId);
  if (!twin) throw new NotFoundError('Institution not found');
  if (await hasPermission(db, actor, institutionId, permission)) return;
  if (await isMemberOf(db, actor, institutionId)) throw new ForbiddenError('Not authorized', 'FORBIDDEN');
  throw new NotFoundError('Institution not found');
}
