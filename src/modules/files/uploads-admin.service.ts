// The admin uploads family: every file of a twin, for holders of uploads.list / uploads.delete there.
// A file of a twin the admin has no rights in answers 404; bulk delete skips such rows and counts the rest.
import type { DatabaseHandle } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError } from '../../platform/http/errors.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { AccessContext, requireAccess } from '../access/access.js';
import { deleteFileRows, findFileById, findFilesByIds, listTwinFiles } from './files.repo.js';
import { currentTwin } from './files.service.js';
import { presentFile } from './files.presenter.js';

export function createUploadsAdminService(deps: { database: DatabaseHandle; storage: FileStorage }) {
  const db = deps.database.db;

  async function deleteRows(ids: string[]): Promise<number> {
    const deleted = await deleteFileRows(db, ids);
    for (const row of deleted) await deps.storage.delete(row.storageKey);
    return deleted.length;
  }

  return {
    async list(actor: Actor, query: { twinId?: string; page: number; limit: number }) {
      const twinId = query.twinId ?? currentTwin(actor);
      if (!twinId) throw new BadRequestError('Name a Digital Twin (institutionId)', 'NO_TWIN');
      await requireAccess(db, actor, 'uploads.list', { twin: twinId });
      const { rows, total } = await listTwinFiles(db, twinId, { offset: (query.page - 1) * query.limit, limit: query.limit });
      return { data: rows.map(presentFile), page: query.page, limit: query.limit, total };
    },

    async remove(actor: Actor, fileId: string): Promise<void> {
      const file = await findFileById(db, fileId);
      await requireAccess(db, actor, 'upload.delete', { file });
      await deleteRows([fileId]);
    },

    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      const access = new AccessContext(db, actor);
      await access.require('twins.managed', { permission: 'uploads.delete' });
      const rows = await findFilesByIds(db, [...new Set(ids)]);
      const deletable: string[] = [];
      // The context reads each other twin's permissions once.
      for (const row of rows) if (await access.check('uploads.delete', { twin: row.twinId })) deletable.push(row.id);
      return deleteRows(deletable);
    },
  };
}

export type UploadsAdminService = ReturnType<typeof createUploadsAdminService>;
