// Wires the files vault: retrieval (the embedder, the vector schema where pgvector exists), its job
// (ingestion, defined by src/jobs.ts with the others on every process), and the services and their routes.
import multipart from '@fastify/multipart';
import type { FastifyBaseLogger } from 'fastify';
import { createEmbedder } from '../../ai/embeddings.js';
import type { Config } from '../../config.js';
import type { DatabaseHandle } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { ensureVectorSchema } from './chunks.repo.js';
import { createCollectionsService } from './collections.service.js';
import { fileRoutes, uploadRoute } from './files.routes.js';
import { createFilesService } from './files.service.js';
import { defineIngestionJob, type IngestionDeps } from './ingestion.js';
import { registerRetrieval } from './retrieval.js';
import { uploadsAdminRoutes } from './uploads-admin.routes.js';
import { createCpuPool, siblingModule } from '../../platform/workers/pool.js';
import { createUploadsAdminService } from './uploads-admin.service.js';

export interface FilesDeps {
  config: Config;
  database: DatabaseHandle;
  storage: FileStorage;
  jobs: JobQueue;
}

type Logger = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/**
 * Retrieval of this process (the embedder, and the vector schema where pgvector exists) and the files'
 * job on its queue: what every process needs, whatever its role. src/jobs.ts calls it once.
 */
export async function defineFilesJobs(deps: FilesDeps, logger: Logger): Promise<void> {
  // The process's threads for the vault's CPU-heavy steps (built-in embedder, extraction, chunking).
  const cpu = createCpuPool(siblingModule(import.meta.url, 'cpu-tasks'));
  const embedder = createEmbedder(deps.config, (texts, dimensions) => cpu.run('embed', { texts, dimensions }));
  const vector = await ensureVectorSchema(deps.database, embedder.dimensions);
  if (deps.database.vector && !vector.ready) logger.warn({ reason: vector.reason }, 'retrieval: full text only');
  logger.info({ embedder: embedder.id, dimensions: embedder.dimensions, hybrid: vector.ready }, vector.ready ? 'retrieval: hybrid (full text + pgvector, RRF)' : 'retrieval: full text only');
  registerRetrieval(deps.database, { embedder, hybrid: vector.ready });
  const onProgress = killAtStage(deps.config.faultKillAt, logger);
  defineIngestionJob(deps.jobs, { database: deps.database, storage: deps.storage, embedder, hybrid: vector.ready, logger, cpu, onProgress });
}

/** FAULT_KILL_AT=ingest:<stage> (the crash harness only): SIGKILL this process when an ingestion reaches the stage. */
function killAtStage(fault: string | undefined, logger: Logger): IngestionDeps['onProgress'] {
  const stage = fault?.startsWith('ingest:') ? fault.slice('ingest:'.length) : undefined;
  if (!stage) return undefined;
  logger.warn({ stage }, 'FAULT_KILL_AT: this process kills itself when an ingestion reaches the stage (a test switch)');
  return (event) => {
    if (event.stage === stage) process.kill(process.pid, 'SIGKILL');
  };
}

/** The files family's services and routes. app.ts calls this once, after the jobs are defined. */
export async function registerFiles(app: App, deps: FilesDeps): Promise<void> {
  const files = createFilesService({ ...deps, uploadLimit: deps.config.uploadLimit });
  // Multipart bodies are parsed in the upload's own scope only: the plugin adds two asynchronous hooks
  // to every request of its scope, and elsewhere a multipart body answers 415 like any other type
  // the route does not take.
  await app.register(async (scope: App) => {
    await scope.register(multipart, { limits: { fileSize: deps.config.uploadLimit, files: 1, fields: 20, fieldSize: 16_384 } });
    uploadRoute(scope, files);
  });
  fileRoutes(app, files, createCollectionsService(deps));
  uploadsAdminRoutes(app, createUploadsAdminService(deps));
}
