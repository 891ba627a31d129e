// Wires the files vault: the embedder, the vector schema where pgvector exists, the ingestion job,
// the services and their routes. The worker role calls setupFiles alone (no routes) to run the jobs.
import type { FastifyBaseLogger } from 'fastify';
import { createEmbedder } from '../../ai/embeddings.js';
import type { Config } from '../../config.js';
import type { DatabaseHandle } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { ensureVectorSchema } from './chunks.repo.js';
import { createCollectionsService } from './collections.service.js';
import { fileRoutes } from './files.routes.js';
import { createFilesService } from './files.service.js';
import { defineIngestionJob } from './ingestion.js';
import { registerRetrieval } from './retrieval.js';
import { uploadsAdminRoutes } from './uploads-admin.routes.js';
import { createUploadsAdminService } from './uploads-admin.service.js';

export interface FilesDeps {
  config: Config;
  database: DatabaseHandle;
  storage: FileStorage;
  jobs: JobQueue;
}

type Logger = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

export async function setupFiles(deps: FilesDeps, logger: Logger) {
  const embedder = createEmbedder(deps.config);
  const vector = await ensureVectorSchema(deps.database, embedder.dimensions);
  if (deps.database.vector && !vector.ready) logger.warn({ reason: vector.reason }, 'retrieval: full text only');
  logger.info({ embedder: embedder.id, dimensions: embedder.dimensions, hybrid: vector.ready }, vector.ready ? 'retrieval: hybrid (full text + pgvector, RRF)' : 'retrieval: full text only');
  registerRetrieval(deps.database, { embedder, hybrid: vector.ready });
  defineIngestionJob(deps.jobs, { database: deps.database, storage: deps.storage, embedder, hybrid: vector.ready, logger });
  return {
    files: createFilesService({ ...deps, uploadLimit: deps.config.uploadLimit }),
    collections: createCollectionsService(deps),
    uploadsAdmin: createUploadsAdminService(deps),
  };
}

/** One registration for app.ts: the module and all of its routes. */
export async function filesModule(app: App, deps: FilesDeps): Promise<void> {
  const module = await setupFiles(deps, app.log);
  fileRoutes(app, module.files, module.collections);
  uploadsAdminRoutes(app, module.uploadsAdmin);
}
