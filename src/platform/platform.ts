// Opens the platform pieces of one process from the configuration (database, bus, mail, storage,
// jobs, secrets), choosing the embedded or scaled adapter of each, and closes them in reverse order.
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config, StartedConfig } from '../config.js';
import { createSecretBox, type SecretBox } from './crypto/secrets.js';
import type { DatabaseHandle } from './db/client.js';
import { openConfiguredDatabase } from './db/open-configured.js';
import { createJobQueue, type JobQueue } from './jobs/queue.js';
import { createProcessLiveness, type ProcessLiveness } from './processes/liveness.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import { createOutbound, type Outbound } from './net/outbound.js';
import { createEventBus, type EventBus } from './realtime/bus.js';
import { openStreamLog, type AnswerLog } from './realtime/open-stream-log.js';
import { createLocalStorage, type FileStorage } from './storage/storage.js';

export interface Platform {
  config: StartedConfig;
  database: DatabaseHandle;
  bus: EventBus;
  mailer: Mailer;
  storage: FileStorage;
  jobs: JobQueue;
  secrets: SecretBox;
  /** This process's heartbeat: what a gone process held is taken back (jobs, streaming answers). */
  liveness: ProcessLiveness;
  /** The outbound guard every request to an administrator-set URL goes through (OUTBOUND_ALLOWED_HOSTS). */
  outbound: Outbound;
  /** Every answer's frames, kept for resumes (STREAM_RETENTION_SECONDS after its end): Redis Streams or memory. */
  streamLog: AnswerLog;
}

/** `opening`: the database already on its way (main.ts); opened here without it. */
export async function openPlatform(
  config: StartedConfig,
  logger: Pick<FastifyBaseLogger, 'info' | 'error'>,
  role = 'all',
  onDatabaseLost?: (error: Error) => void,
  opening?: Promise<DatabaseHandle>,
): Promise<Platform> {
  const database = await (opening ?? openConfiguredDatabase(config, onDatabaseLost));
  logger.info(
    { database: database.kind, vector: database.vector },
    database.vector ? 'retrieval: hybrid (full text + pgvector)' : 'retrieval: full text only (pgvector is not installed)',
  );
  const bus = await createEventBus({ redisUrl: config.redisUrl });
  // PGlite's data belongs to one process: at start, every other process row is of a dead one.
  const liveness = createProcessLiveness(database, { role, timeoutSeconds: config.processTimeoutSeconds, exclusive: database.kind === 'pglite', logger });
  await liveness.start();
  const storage = await openStorage(config, liveness.id);
  // A process killed mid-write leaves its unfinished file behind; once it counts as gone, it goes.
  const removeAbandoned = storage.removeAbandonedWrites?.bind(storage);
  if (removeAbandoned) liveness.onBeat(async () => void (await removeAbandoned((ids) => liveness.goneOf(ids))));
  logger.info(
    config.filesS3 ? { files: 's3', bucket: config.filesS3.bucket, endpoint: config.filesS3.endpoint } : { files: 'local', dir: path.join(config.dataDir, 'files') },
    config.filesS3 ? 'files: S3-compatible object store' : 'files: local folder (processes of a deployment that has several must all reach it)',
  );
  return {
    config,
    database,
    bus,
    mailer: createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, outboxDir: path.join(config.dataDir, 'outbox'), logger }),
    storage,
    jobs: createJobQueue(database, { logger, liveness, pollingIntervalSeconds: pollingSeconds(database, role) }),
    secrets: createSecretBox(config.encryptionKey),
    liveness,
    outbound: createOutbound({ allowedHosts: config.outbound.allowedHosts }),
    streamLog: openStreamLog(bus, config.resume.streamRetentionSeconds, (err) => logger.error({ err }, 'stream log write failed'), config.resume.log),
  };
}

export async function closePlatform(platform: Platform): Promise<void> {
  await platform.jobs.stop({ graceful: true, timeoutMs: 5_000 }).catch(() => {});
  await platform.liveness.stop().catch(() => {});
  // Before the bus: the log writes on its connection.
  await platform.streamLog.close().catch(() => {});
  await platform.bus.close().catch(() => {});
  await platform.mailer.close().catch(() => {});
  await platform.storage.close?.().catch(() => {});
  platform.outbound.fetch.close();
  await platform.database.close();
}

/**
 * FILES_S3_* set: the object store every process reaches; unset: DATA_DIR/files of this machine.
 * The AWS SDK is loaded only for a store (~5 MB of heap a process otherwise).
 */
async function openStorage(config: Config, writerId: string): Promise<FileStorage> {
  if (!config.filesS3) return createLocalStorage(path.join(config.dataDir, 'files'), { writerId });
  const { createS3Storage } = await import('./storage/s3-storage.js');
  return createS3Storage(config.filesS3);
}

/**
 * How often each idle job slot asks for work (every defined job's slots, and pg-boss's cron slot, in every
 * working process). A process that sends a job wakes its own slots at once (queue.ts), so the polling
 * only picks up delayed retries, cron jobs, and jobs another process sent while its slots were all busy:
 * every 10 s. A worker of its own (`start:worker`) hears of no send, every job comes from the API
 * processes: it asks every 2 s. Each ask costs a query (on PGlite, its one connection; on a server, a
 * round through the driver), and a process has ten slots (docs/decisions.md, "HTTP").
 */
function pollingSeconds(database: DatabaseHandle, role: string): number {
  return database.kind === 'postgres' && role === 'worker' ? 2 : 10;
}
