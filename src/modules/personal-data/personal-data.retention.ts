// The personal-data retention job (`personal-data.retention`, hourly): deletes export archives whose
// link has expired, fails exports whose job is gone, and purges rows soft-deleted by their owner
// (POST /api/user/data/delete, a history record's delete) once the grace period has passed: files with
// their chunks and stored blobs, collections, personal memory, personal assistants, history records.
// Batched and idempotent: a retry or a second worker only finds what is still due.
import { and, inArray, isNotNull, lt, ne, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { assistants } from '../assistants/assistants.tables.js';
import { fileCollections, files } from '../files/files.tables.js';
import { history } from '../history/history.tables.js';
import { memoryParameters } from '../memory/memory.tables.js';
import { EXPORT_EXPIRE_SECONDS, EXPORT_RETRY_LIMIT } from './export.job.js';
import { expiredArchives, failStaleExports, updateExport } from './exports.repo.js';

export const PERSONAL_RETENTION_JOB = 'personal-data.retention';
export const PERSONAL_RETENTION_CRON = '41 * * * *';
/** Soft-deleted rows stay this long (hidden everywhere) before they are purged. */
export const DELETE_GRACE_DAYS = 30;
const DAY_MS = 86_400_000;
const BATCH = 500;

export interface RetentionDeps {
  db: Database;
  storage: FileStorage;
  now: () => Date;
}

export interface RetentionReport {
  archives: number;
  staleExports: number;
  purged: { files: number; collections: number; memory: number; assistants: number; history: number };
}

export async function runPersonalRetention(deps: RetentionDeps, signal?: AbortSignal): Promise<RetentionReport> {
  const now = deps.now();
  const archives = await deleteExpiredArchives(deps, now, signal);
  // Longer than every attempt of the export job could take, with their backoff.
  const staleAfterMs = (EXPORT_RETRY_LIMIT + 1) * (EXPORT_EXPIRE_SECONDS * 1000 + 5 * 60_000);
  const staleExports = await failStaleExports(deps.db, new Date(now.getTime() - staleAfterMs));
  const cutoff = new Date(now.getTime() - DELETE_GRACE_DAYS * DAY_MS);
  const purged = {
    files: await purgeFiles(deps, cutoff, signal),
    collections: await purgeRows(deps.db, fileCollections, fileCollections.id, lt(fileCollections.deletedAt, cutoff), signal),
    memory: await purgeRows(deps.db, memoryParameters, memoryParameters.id, lt(memoryParameters.deletedAt, cutoff), signal),
    assistants: await purgeRows(deps.db, assistants, assistants.id, lt(assistants.deletedAt, cutoff), signal),
    // A record still streaming holds credits until its turn settles; it is purged on a later run.
    history: await purgeRows(deps.db, history, history.id, and(lt(history.deletedAt, cutoff), ne(history.status, 'streaming'))!, signal),
  };
  return { archives, staleExports, purged };
}

async function deleteExpiredArchives(deps: RetentionDeps, now: Date, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const due = await expiredArchives(deps.db, now, BATCH);
    for (const row of due) {
      await deps.storage.delete(row.storageKey!);
      // The token hash stays, so the old link answers 410 (expired) rather than 404.
      await updateExport(deps.db, row.id, { storageKey: null, purgedAt: now });
    }
    total += due.length;
    if (due.length < BATCH) return total;
  }
}

async function purgeFiles(deps: RetentionDeps, cutoff: Date, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const due = await deps.db.select({ id: files.id }).from(files).where(and(isNotNull(files.deletedAt), lt(files.deletedAt, cutoff))).limit(BATCH);
    if (due.length === 0) return total;
    // Rows first (chunks go with them by cascade), blobs after: a blob left by a crash is harmless, a row without its blob is not.
    const deleted = await deps.db.delete(files).where(inArray(files.id, due.map((row) => row.id))).returning({ storageKey: files.storageKey });
    for (const row of deleted) await deps.storage.delete(row.storageKey);
    total += deleted.length;
  }
}

type PurgeTable = typeof fileCollections | typeof memoryParameters | typeof assistants | typeof history;

async function purgeRows(db: Database, table: PurgeTable, id: PurgeTable['id'], due: SQL, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const batch = await db.select({ id }).from(table).where(due).limit(BATCH);
    if (batch.length === 0) return total;
    const deleted = await db.delete(table).where(inArray(id, batch.map((row) => row.id))).returning({ id });
    total += deleted.length;
    if (deleted.length === 0) return total;
  }
}

const retentionPayload = z.object({});

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'personal-data.retention': z.infer<typeof retentionPayload>;
  }
}

export function defineRetentionJob(jobs: JobQueue, deps: RetentionDeps): void {
  jobs.define({
    name: PERSONAL_RETENTION_JOB,
    schema: retentionPayload,
    perform: async (_payload, { signal }) => {
      await runPersonalRetention(deps, signal);
    },
    retryLimit: 3,
    retryDelaySeconds: 60,
    expireInSeconds: 60 * 60,
  });
}

export async function schedulePersonalDataJobs(jobs: JobQueue): Promise<void> {
  await jobs.schedule(PERSONAL_RETENTION_JOB, PERSONAL_RETENTION_CRON);
}
