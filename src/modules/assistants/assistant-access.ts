// What the caller may do with one assistant: see it, pick it, edit it, manage it (move, status,
// editable_others, delete). Managing means holding assistants.edit on its twin (its administrators
// hold every permission there); personal and system assistants are managed by super admins only.
import type { Executor } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { hasPermission, isMemberOf } from '../institutions/access.js';
import type { Permission } from '../../platform/http/permissions.js';
import { findAssistantById, findPickableAssistant } from './assistants.repo.js';
import type { AssistantRow } from './assistants.tables.js';
import { pickContextForActor } from './scope.js';

export const ASSISTANT_NOT_FOUND = 'Assistant not found!';

export interface AssistantAccess {
  row: AssistantRow;
  owner: boolean;
  system: boolean;
  pickable: boolean;
  /** Holds assistants.edit on its twin (super for personal and system assistants). */
  manages: boolean;
  canEdit: boolean;
}

/** Permission `permission` on the assistant's twin; personal and system assistants: super admins only. */
export async function holdsOn(db: Executor, actor: Actor, institutionId: string | null, permission: Permission): Promise<boolean> {
  if (!institutionId) return isSuper(actor) && !actor.launchScope;
  return hasPermission(db, actor, institutionId, permission);
}

/**
 * Loads the assistant as the caller sees it, or throws 404 "Assistant not found!" when it is unknown,
 * deleted (unless includeDeleted and the caller manages it) or outside everything the caller may see.
 */
export async function loadAssistantFor(
  db: Executor,
  actor: Actor,
  id: string,
  options: { includeDeleted?: boolean } = {},
): Promise<AssistantAccess> {
  const row = await findAssistantById(db, id);
  if (!row) throw new NotFoundError(ASSISTANT_NOT_FOUND, 'ASSISTANT_NOT_FOUND');
  const system = !row.userId && !row.institutionId;
  // An owner who left the assistant's twin no longer reaches it through ownership.
  const owner = row.userId === actor.userId && (!row.institutionId || (await isMemberOf(db, actor, row.institutionId)));
  const manages = await holdsOn(db, actor, row.institutionId, 'assistants.edit');
  if (row.status === 'deleted' && !(options.includeDeleted && manages)) {
    throw new NotFoundError(ASSISTANT_NOT_FOUND, 'ASSISTANT_NOT_FOUND');
  }
  const pickable = Boolean(await findPickableAssistant(db, await pickContextForActor(db, actor), id));
  const lists = manages || (await holdsOn(db, actor, row.institutionId, 'assistants.list'));
  if (!pickable && !owner && !lists) throw new NotFoundError(ASSISTANT_NOT_FOUND, 'ASSISTANT_NOT_FOUND');
  const canEdit = system ? manages : owner || manages || (row.editableOthers && pickable);
  return { row, owner, system, pickable, manages, canEdit };
}
