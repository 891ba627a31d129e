// The files vault of a person: upload, list, read, download, delete, text edit and search.
// Reading: the uploader, or a holder of files.access in the file's twin; writing: the uploader only.
// Anything the caller may not read answers 404, never 403.
import type { Readable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { withTransaction, type DatabaseHandle } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { findTwinById } from '../twins/twins.repo.js';
import { checkAccess, requireAccess } from '../access/access.js';
import { TEXT_EDITABLE_KINDS, type FileKind } from './detect.js';
import { countFilesOf, deleteFileRows, findCollectionById, findFileById, insertFile, listFiles, updateFile } from './files.repo.js';
import { presentFile } from './files.presenter.js';
import type { FileRecord } from './files.schemas.js';
import type { FileRow } from './files.tables.js';
import { INGEST_JOB, type IngestPayload } from './ingestion.js';
import { searchChunks, searchScopeFor, toEntry, DEFAULT_RETRIEVAL_MODE, type RetrievalEntry } from './retrieval.js';
import { PayloadTooLargeError, receiveUpload, UnsupportedMediaTypeError, type UploadPart } from './upload.js';

export interface FilesServiceDeps {
  database: DatabaseHandle;
  storage: FileStorage;
  jobs: JobQueue;
  uploadLimit: number;
}

const FILE_NOT_FOUND = 'File not found';
const truthy = (value: string | undefined) => value !== undefined && ['true', '1', 'on', 'yes'].includes(value.trim().toLowerCase());

/** The twin a person works in now (a launch session is confined to its twin). */
export function currentTwin(actor: Actor): string | null {
  return actor.launchScope?.twinId ?? actor.twinId;
}

export function createFilesService(deps: FilesServiceDeps) {
  const { database, storage, jobs } = deps;
  const db = database.db;

  async function readable(actor: Actor, fileId: string): Promise<FileRow> {
    const file = await findFileById(db, fileId);
    await requireAccess(db, actor, 'file.read', { file });
    return file!;
  }

  /** The caller's own file; another person's file answers 404 even to an admin (admins use /api/admin/upload). */
  async function own(actor: Actor, fileId: string): Promise<FileRow> {
    const file = await findFileById(db, fileId);
    await requireAccess(db, actor, 'file.write', { file });
    return file!;
  }

  async function queueIngestion(payload: IngestPayload): Promise<void> {
    await jobs.send(INGEST_JOB, payload);
  }

  return {
    async upload(actor: Actor, parts: AsyncIterable<UploadPart>): Promise<{ uploadId: string }> {
      const twinId = currentTwin(actor);
      if (!twinId) throw new BadRequestError('Join a Digital Twin before uploading files', 'NO_TWIN');
      const twin = await findTwinById(db, twinId);
      if (!twin) throw new BadRequestError('Join a Digital Twin before uploading files', 'NO_TWIN');
      await requireAccess(db, actor, 'file.upload', { twin });
      const limitReached = async () =>
        twin.maxFiles > 0 && (await countFilesOf(db, twinId, actor.userId)) >= twin.maxFiles;
      const tooMany = () => new ForbiddenError(`You have reached this Digital Twin's limit of ${twin.maxFiles} files`, 'FILE_LIMIT_REACHED');
      if (await limitReached()) throw tooMany();

      const received = await receiveUpload(parts, storage, deps.uploadLimit);
      let row: FileRow;
      try {
        const { fields } = received;
        const shared = truthy(fields.shared);
        if (shared) await requireAccess(db, actor, 'file.share', { twin: twinId });
        const collectionId = fields.collectionId?.trim() || null;
        if (collectionId) {
          const collection = /^[0-9a-f]{24}$/.test(collectionId) ? await findCollectionById(db, collectionId) : undefined;
          await requireAccess(db, actor, 'collection.use', { collection, twin: twinId });
        }
        row = await withTransaction(db, async (tx) => {
          // Concurrent uploads of one person are counted one after the other, so maxFiles holds.
          await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`files:${twinId}:${actor.userId}`}))`);
          if (twin.maxFiles > 0 && (await countFilesOf(tx, twinId, actor.userId)) >= twin.maxFiles) throw tooMany();
          return insertFile(tx, {
            twinId,
            userId: actor.userId,
            collectionId,
            originalname: received.originalname,
            extension: received.type.extension,
            mimetype: received.type.mimetype,
            kind: received.type.kind,
            size: received.size,
            storageKey: received.storageKey,
            confidential: truthy(fields.confidential),
            shared,
          });
        });
      } catch (error) {
        await storage.delete(received.storageKey);
        throw error;
      }
      try {
        await queueIngestion({ fileId: row.id, generation: row.pendingGeneration });
      } catch (error) {
        await deleteFileRows(db, [row.id]);
        await storage.delete(row.storageKey);
        throw error;
      }
      return { uploadId: row.id };
    },

    async list(actor: Actor, query: { page: number; limit: number; collectionId?: string }) {
      const twinId = currentTwin(actor);
      if (!twinId) return { data: [] as FileRecord[], page: query.page, limit: query.limit, total: 0 };
      const includeShared = await checkAccess(db, actor, 'files.access', { twin: twinId });
      const { rows, total } = await listFiles(
        db,
        { twinId, userId: actor.userId, includeShared, collectionId: query.collectionId },
        { offset: (query.page - 1) * query.limit, limit: query.limit },
      );
      return { data: rows.map(presentFile), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, fileId: string): Promise<FileRecord> {
      return presentFile(await readable(actor, fileId));
    },

    async download(actor: Actor, fileId: string): Promise<{ file: FileRecord; stream: Readable }> {
      const file = await readable(actor, fileId);
      if (!(await storage.exists(file.storageKey))) throw new NotFoundError(FILE_NOT_FOUND);
      return { file: presentFile(file), stream: storage.get(file.storageKey) };
    },

    async remove(actor: Actor, fileId: string): Promise<void> {
      const file = await own(actor, fileId);
      await deleteFileRows(db, [file.id]); // chunks and vectors go with the row (cascade)
      await storage.delete(file.storageKey);
    },

    async editContent(actor: Actor, fileId: string, content: string): Promise<{ uploadId: string }> {
      const file = await own(actor, fileId);
      if (!TEXT_EDITABLE_KINDS.has(file.kind as FileKind)) {
        throw new UnsupportedMediaTypeError(`This file type (${file.extension}) cannot be edited as text`, 'NOT_TEXT_EDITABLE');
      }
      if (content.trim() === '') throw new BadRequestError('Content cannot be empty', 'EMPTY_CONTENT');
      const body = Buffer.from(content, 'utf8');
      if (body.length > deps.uploadLimit) throw new PayloadTooLargeError(deps.uploadLimit);
      await storage.put(file.storageKey, body); // atomic replace: same key, same id, same file_url
      const updated = await updateFile(db, file.id, {
        size: body.length,
        status: 'processing',
        stage: 'extract',
        progress: 0,
        error: null,
        pendingGeneration: sql`${sql.identifier('pending_generation')} + 1` as unknown as number,
      });
      if (!updated) throw new NotFoundError(FILE_NOT_FOUND);
      await queueIngestion({ fileId: file.id, generation: updated.pendingGeneration });
      return { uploadId: file.id };
    },

    async search(actor: Actor, query: string, limit = 10): Promise<RetrievalEntry[]> {
      const scope = await searchScopeFor(database, actor);
      if (!scope) return [];
      const hits = await searchChunks(database, scope, query, limit);
      return hits.map((hit) => toEntry(hit, DEFAULT_RETRIEVAL_MODE));
    },
  };
}

export type FilesService = ReturnType<typeof createFilesService>;
