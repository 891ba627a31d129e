// Access checks a service runs first: which permissions the caller holds in a given twin.
// The current twin's permissions come with the actor; another twin's are read from the membership.
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { ForbiddenError } from '../../platform/http/errors.js';
import { findMembership, listMembershipsOfUser } from './institutions.repo.js';
import { permissionsFor, type Permission } from '../../platform/http/permissions.js';

export async function permissionsIn(db: Executor, actor: Actor, institutionId: string): Promise<Permission[]> {
  if (actor.launchScope) return []; // a launch session has user rights only (behaviour 16)
  if (actor.institutionId === institutionId) return actor.permissions;
  if (actor.accountType === 'super') return permissionsFor('super', undefined, []);
  const membership = await findMembership(db, actor.userId, institutionId);
  return permissionsFor(actor.accountType, membership?.role, membership?.permissions ?? []);
}

export async function hasPermission(db: Executor, actor: Actor, institutionId: string, permission: Permission): Promise<boolean> {
  return (await permissionsIn(db, actor, institutionId)).includes(permission);
}

/** Throws 403 unless the caller holds `permission` in the twin. */
export async function requirePermission(
  db: Executor,
  actor: Actor,
  institutionId: string,
  permission: Permission,
  message = 'Not authorized',
): Promise<void> {
  if (!(await hasPermission(db, actor, institutionId, permission))) throw new ForbiddenError(message, 'FORBIDDEN');
}

/** Is the caller a member (any role) of the twin? Super admins count as members everywhere. */
export async function isMemberOf(db: Executor, actor: Actor, institutionId: string): Promise<boolean> {
  if (actor.launchScope) return actor.launchScope.institutionId === institutionId;
  if (actor.accountType === 'super' || actor.institutionId === institutionId) return true;
  return Boolean(await findMembership(db, actor.userId, institutionId));
}

/**
 * The twins in which the caller holds `permission`: 'all' for a super admin, none for a launch session.
 * Admin lists and bulk actions are scoped to these; a row of any other twin answers as not found.
 */
export async function managedInstitutionIds(db: Executor, actor: Actor, permission: Permission): Promise<'all' | string[]> {
  if (actor.launchScope) return [];
  if (actor.accountType === 'super') return 'all';
  const rows = await listMembershipsOfUser(db, actor.userId);
  return rows
    .filter((row) => permissionsFor(actor.accountType, row.role, row.permissions).includes(permission))
    .map((row) => row.institutionId);
}
