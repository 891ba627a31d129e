// Collections of the files vault and their streamed ZIP download (spec behaviour 10: the owner of
// the collection, or a holder of files.access in its twin). Anyone else gets 404.
import type { Readable } from 'node:stream';
import type { DatabaseHandle } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError } from '../../platform/http/errors.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { checkAccess, requireAccess } from '../access/access.js';
import { filesOfCollection, findCollectionById, insertCollection, listCollections } from './files.repo.js';
import { currentTwin } from './files.service.js';
import { presentCollection } from './files.presenter.js';
import type { CollectionRecord } from './files.schemas.js';
import { safeDisplayName } from './detect.js';
import { zipStream } from './zip.js';

export function createCollectionsService(deps: { database: DatabaseHandle; storage: FileStorage }) {
  const db = deps.database.db;
  return {
    async create(actor: Actor, name: string): Promise<CollectionRecord> {
      const twinId = currentTwin(actor);
      if (!twinId) throw new BadRequestError('Join a Digital Twin before creating collections', 'NO_TWIN');
      const row = await insertCollection(db, { twinId, userId: actor.userId, name });
      return presentCollection({ ...row, fileCount: 0 }, actor.userId);
    },

    async list(actor: Actor): Promise<CollectionRecord[]> {
      const twinId = currentTwin(actor);
      if (!twinId) return [];
      const all = await checkAccess(db, actor, 'files.access', { twin: twinId });
      const rows = await listCollections(db, twinId, actor.userId, all);
      return rows.map((row) => presentCollection(row, actor.userId));
    },

    async zip(actor: Actor, collectionId: string): Promise<{ filename: string; stream: Readable }> {
      const found = await findCollectionById(db, collectionId);
      await requireAccess(db, actor, 'collection.read', { collection: found });
      const collection = found!;
      const files = await filesOfCollection(db, collection.twinId, collection.id);
      const stream = zipStream(
        deps.storage,
        files.map((file) => ({ name: file.originalname, storageKey: file.storageKey })),
      );
      return { filename: `${safeDisplayName(collection.name).replace(/\.zip$/i, '')}.zip`, stream };
    },
  };
}

export type CollectionsService = ReturnType<typeof createCollectionsService>;
