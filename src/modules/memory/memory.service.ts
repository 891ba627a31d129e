// Memory parameters of the person's working twin: list (their personal rows and the twin's shared
// rows), create, edit and delete. Rows the caller cannot see (another person's personal row, any row
// of another twin) answer 404; visible shared rows they may not change answer 403.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { findTwinById } from '../twins/twins.repo.js';
import { checkAccess, MEMORY_NOT_FOUND, requireAccess } from '../access/access.js';
import { findUserById } from '../users/users.repo.js';
import { presentMemory } from './memory.presenter.js';
import { deleteMemory, findMemory, insertMemory, listVisibleMemories, updateMemory, type MemoryUpdate, type MemoryWithTwin } from './memory.repo.js';
import type { CreateMemoryInput, EditMemoryInput, MemoryParameterWire } from './memory.schemas.js';
import { DEFAULT_NAMESPACE } from './memory.tables.js';

export const MEMORY_ADMINS_ONLY = 'Only administrators of this twin may share memories';
export const USER_MEMORY_OFF = 'Enable User Memory is off: personal memories are not saved';
export const NO_TWIN = 'Choose a twin first';
/** A twin's memory is a short list; the list route returns up to this many rows. */
export const MEMORY_LIST_LIMIT = 500;

export interface MemoryService {
  list(actor: Actor): Promise<MemoryParameterWire[]>;
  create(actor: Actor, input: CreateMemoryInput): Promise<MemoryParameterWire>;
  edit(actor: Actor, id: string, input: EditMemoryInput): Promise<MemoryParameterWire>;
  remove(actor: Actor, id: string): Promise<void>;
}

/** The twin whose memory the person works with: the launch twin of a launch session, else the current twin. */
function workingTwin(actor: Actor): string | null {
  return actor.launchScope?.twinId ?? actor.twinId;
}

export function createMemoryService(db: Database): MemoryService {
  /** Super admins and holders of institutions.edit on the twin (its admins) manage its shared memory. */
  async function managesTwin(actor: Actor, twinId: string): Promise<boolean> {
    return checkAccess(db, actor, 'memory.manage', { twin: twinId });
  }

  function viewOf(actor: Actor, row: MemoryWithTwin, manages: boolean): { isAuthor: boolean; editable: boolean } {
    const isAuthor = row.userId === actor.userId;
    return { isAuthor, editable: isAuthor || (row.shared && manages) };
  }

  /** The row the caller may change, with whether they manage its twin; 404 when they cannot see it, 403 when not theirs to change. */
  async function editableRow(actor: Actor, id: string): Promise<{ row: MemoryWithTwin; manages: boolean }> {
    const twin = workingTwin(actor);
    const row = twin ? await findMemory(db, twin, id) : undefined;
    const { manages } = await requireAccess(db, actor, 'memory.edit', { memory: row });
    return { row: row!, manages };
  }

  /** memoryAdminsOnly: only those who manage the twin may create shared rows or switch rows to shared. */
  async function checkMayShare(actor: Actor, twinId: string, manages: boolean): Promise<void> {
    if (manages) return;
    const twin = await findTwinById(db, twinId);
    if (!twin || twin.memoryAdminsOnly) throw new ForbiddenError(MEMORY_ADMINS_ONLY, 'MEMORY_ADMINS_ONLY');
  }

  return {
    async list(actor) {
      const twin = workingTwin(actor);
      if (!twin) return [];
      const manages = await managesTwin(actor, twin);
      const rows = await listVisibleMemories(db, twin, actor.userId, MEMORY_LIST_LIMIT);
      return rows.map((row) => presentMemory(row, viewOf(actor, row, manages)));
    },

    async create(actor, input) {
      const twin = workingTwin(actor);
      if (!twin) throw new BadRequestError(NO_TWIN, 'NO_TWIN');
      const manages = await managesTwin(actor, twin);
      const shared = input.shared ?? false;
      if (shared) await checkMayShare(actor, twin, manages);
      else {
        // Behaviour 7: with the switch off no new personal memory is saved, by hand or by extraction.
        const user = await findUserById(db, actor.userId);
        if (!user?.userMemoryEnabled) throw new ForbiddenError(USER_MEMORY_OFF, 'USER_MEMORY_DISABLED');
      }
      const inserted = await insertMemory(db, {
        twinId: twin,
        userId: actor.userId,
        keyName: input.key_name,
        keyValue: input.key_value,
        keyDescription: input.key_description ?? '',
        keyNamespace: input.key_namespace ?? DEFAULT_NAMESPACE,
        shared,
      });
      const row = await findMemory(db, twin, inserted.id);
      if (!row) throw new NotFoundError(MEMORY_NOT_FOUND);
      return presentMemory(row, viewOf(actor, row, manages));
    },

    async edit(actor, id, input) {
      const { row, manages } = await editableRow(actor, id);
      if (input.shared === true && !row.shared) await checkMayShare(actor, row.twinId, manages);
      const values: MemoryUpdate = {};
      if (input.key_value !== undefined) values.keyValue = input.key_value;
      if (input.key_description !== undefined) values.keyDescription = input.key_description;
      if (input.shared !== undefined) values.shared = input.shared;
      await updateMemory(db, row.twinId, row.id, values);
      const updated = await findMemory(db, row.twinId, row.id);
      if (!updated) throw new NotFoundError(MEMORY_NOT_FOUND);
      return presentMemory(updated, viewOf(actor, updated, manages));
    },

    async remove(actor, id) {
      const { row } = await editableRow(actor, id);
      await deleteMemory(db, row.twinId, row.id);
    },
  };
}
