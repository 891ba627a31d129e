// Ingestion as a durable job: extract → chunk → sanitize → embed → finalize, each stage visible on
// the file. Chunks are written under the job's generation and become visible only when finalize
// flips the file's generation in one short transaction. A re-run (crash, expiry, retry) first deletes
// every unfinished generation, so it ends the same way: one set of chunks, no orphans.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Embedder } from '../../ai/embeddings.js';
import { withTransaction, type DatabaseHandle } from '../../platform/db/client.js';
import { analyzeStaleTables } from '../../platform/db/maintenance.js';
import type { JobContext, JobQueue } from '../../platform/jobs/queue.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import type { CpuPool } from '../../platform/workers/pool.js';
import { chunkText, sanitizeChunk } from './chunking.js';
import { countChunks, deleteChunksExcept, insertChunks } from './chunks.repo.js';
import type { FileKind } from './detect.js';
import { ExtractionError, extractText } from './extract.js';
import { findFileById, updateFile } from './files.repo.js';
import { files, type IngestionStage } from './files.tables.js';

export const INGEST_JOB = 'files.ingest';
export const INGEST_RETRY_LIMIT = 3;
const BATCH_SIZE = 64;
/**
 * Chunks per INSERT on PGlite: it is one connection, and a chunk's index entries (full text and HNSW)
 * cost 1-3 ms each, so a 64-row statement held the statements of every request for 0.3 s or more, and
 * a four-row one about 10 ms. One row a statement, with a turn of the event loop between them, keeps each pause to a
 * chunk's own cost, for about 20% more time in all.
 */
const PGLITE_WRITE_SLICE = 1;
export const ABANDONED_REASON = 'Processing failed: the process running it stopped, and no retry was left';

export const ingestPayload = z.object({ fileId: z.string().length(24), generation: z.number().int().min(1) });
export type IngestPayload = z.infer<typeof ingestPayload>;

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'files.ingest': IngestPayload;
  }
}

export interface IngestionDeps {
  database: DatabaseHandle;
  storage: FileStorage;
  embedder: Embedder;
  /** Whether chunks get embeddings (the vector column exists). */
  hybrid: boolean;
  /** Threads for extraction, chunking and sanitizing (tasks of cpu-tasks.ts); without, they run in place. */
  cpu?: CpuPool;
  logger?: { error(o: object, m?: string): void };
  /**
   * Told of each stage and each written batch, after the file row shows it; awaited, and given the
   * job's signal. A place for progress events (e.g. to a live view); tests use it to stop a worker mid-job.
   */
  onProgress?: (event: { fileId: string; stage: IngestionStage; progress: number; chunksWritten: number }, signal: AbortSignal) => Promise<void> | void;
}

export function defineIngestionJob(jobs: JobQueue, deps: IngestionDeps): void {
  jobs.define({
    name: INGEST_JOB,
    schema: ingestPayload,
    retryLimit: INGEST_RETRY_LIMIT,
    retryDelaySeconds: 2,
    retryBackoff: true,
    expireInSeconds: 30 * 60,
    concurrency: 2,
    perform: (payload, context) => ingestFile(deps, payload, context),
    // The process died in the last attempt: the file ends as an error, its unfinished chunks deleted.
    abandoned: ({ fileId, generation }) => markFailed(deps.database, fileId, generation, ABANDONED_REASON),
  });
}

/** Thrown when a newer ingestion (a content edit) or a delete superseded this one. */
class Superseded extends Error {}

export async function ingestFile(deps: IngestionDeps, { fileId, generation }: IngestPayload, context: Pick<JobContext, 'signal' | 'attempt'>): Promise<void> {
  const { db } = deps.database;
  const { signal } = context;
  const file = await findFileById(db, fileId);
  // Deleted, a newer edit took over, or this generation is already final (a redelivery).
  if (!file || file.pendingGeneration !== generation || file.generation === generation) return;
  const current = eq(files.pendingGeneration, generation);
  let written = 0;
  const stage = async (name: IngestionStage, progress: number) => {
    signal.throwIfAborted();
    const updated = await updateFile(db, fileId, { stage: name, progress, status: 'processing' }, current);
    if (!updated) throw new Superseded();
    await deps.onProgress?.({ fileId, stage: name, progress, chunksWritten: written }, signal);
    signal.throwIfAborted();
  };

  try {
    // Leftovers of an earlier attempt of this generation, or of abandoned ones, go first.
    await deleteChunksExcept(db, fileId, file.generation);
    await stage('extract', 5);
    const content = await deps.storage.read(file.storageKey);
    const text = await extract(deps.cpu, file.kind as FileKind, content);
    await stage('chunk', 20);
    const pieces = deps.cpu ? await deps.cpu.run<string[]>('chunk', { text }) : chunkText(text);
    await stage('sanitize', 30);
    const chunks = deps.cpu ? await deps.cpu.run<string[]>('sanitize', { pieces }) : pieces.map(sanitizeChunk).filter((piece) => piece.length > 0);
    if (chunks.length === 0 && file.kind !== 'image') throw new ExtractionError('No text could be found in the file');
    await stage('embed', 40);
    for (let start = 0; start < chunks.length; start += BATCH_SIZE) {
      const batch = chunks.slice(start, start + BATCH_SIZE);
      const embeddings = deps.hybrid ? await deps.embedder.embed(batch, signal) : [];
      signal.throwIfAborted();
      const rows = batch.map((chunk, i) => ({ twinId: file.twinId, fileId, generation, chunkIndex: start + i, text: chunk, embedding: embeddings[i] }));
      const slice = deps.database.kind === 'pglite' ? PGLITE_WRITE_SLICE : BATCH_SIZE;
      for (let from = 0; from < rows.length; from += slice) {
        if (from > 0) await yieldToRequests();
        await insertChunks(db, rows.slice(from, from + slice), deps.hybrid);
      }
      written += batch.length;
      await stage('embed', 40 + Math.floor((55 * Math.min(chunks.length, start + BATCH_SIZE)) / chunks.length));
    }
    await stage('finalize', 95);
    signal.throwIfAborted();
    await withTransaction(db, async (tx) => {
      const done = await updateFile(
        tx,
        fileId,
        { status: 'ready', stage: 'finalize', progress: 100, error: null, chunkCount: chunks.length, generation },
        current,
      );
      if (!done) throw new Superseded();
      // Two runs of one generation at once (an expired run still going) would double the rows: refuse, retry cleans up.
      if ((await countChunks(tx, fileId, generation)) !== chunks.length) throw new Error('Chunk count mismatch at finalize; retrying');
      await deleteChunksExcept(tx, fileId, generation);
    });
    // A large file can change the chunks table enough for its statistics to mislead search plans
    // (PGlite has no autovacuum to notice): bring them up to date now, not at the next minute's job.
    await analyzeStaleTables(deps.database).catch((err: unknown) => deps.logger?.error({ err }, 'analyze after ingestion failed'));
  } catch (error) {
    if (error instanceof Superseded) return;
    if (signal.aborted) throw error; // the queue stopped or the job expired: retried from the start
    const final = error instanceof ExtractionError || context.attempt > INGEST_RETRY_LIMIT;
    if (!final) throw error;
    if (!(error instanceof ExtractionError)) deps.logger?.error({ err: error, fileId }, 'ingestion failed for good');
    const reason = error instanceof ExtractionError ? error.message : `Processing failed: ${(error as Error).message ?? String(error)}`.slice(0, 300);
    await markFailed(deps.database, fileId, generation, reason);
  }
}

function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The file's text, on the CPU pool when there is one (an ExtractionError stays one across the thread). */
async function extract(cpu: CpuPool | undefined, kind: FileKind, content: Buffer): Promise<string> {
  if (!cpu) return extractText(kind, content);
  try {
    return await cpu.run<string>('extract', { kind, content: new Uint8Array(content) });
  } catch (err) {
    if (err instanceof Error && err.name === 'ExtractionError') throw new ExtractionError(err.message);
    throw err;
  }
}

/** The error status with its reason; an errored file has no searchable chunks. */
async function markFailed(database: DatabaseHandle, fileId: string, generation: number, reason: string): Promise<void> {
  await withTransaction(database.db, async (tx) => {
    const failed = await updateFile(
      tx,
      fileId,
      { status: 'error', error: reason, chunkCount: 0, generation: 0, progress: 100 },
      eq(files.pendingGeneration, generation),
    );
    if (failed) await deleteChunksExcept(tx, fileId, -1);
  });
}
