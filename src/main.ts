// Process entry: `all` (default: API + Socket.IO + job worker), `api`, or `worker`. With API_PROCESSES
// above 1 (`all` or `api`) this process becomes the primary of a group of API processes sharing the
// port (platform/http/process-group.ts), each of them running this file in that role.
// The port listens from the start and answers 503 `starting` until the service is ready
// (platform/http/starting.ts). SIGTERM/SIGINT stop accepting, let in-flight requests finish up to
// SHUTDOWN_GRACE_MS, then close.
import cluster from 'node:cluster';
import v8 from 'node:v8';
import pino, { type Logger } from 'pino';
import { ConfigError, loadConfig, type ProcessRole, type StartedConfig } from './config.js';
import { LISTEN_BACKLOG, processGroupSlot, serveHandedConnections, startProcessGroup } from './platform/http/process-group.js';
import { listenWhileStarting, type StartingInfo } from './platform/http/starting.js';
import type { Platform } from './platform/platform.js';
import { withSecrets } from './platform/secrets-at-start.js';
import { createBatchedDestination } from './platform/logging/batched-destination.js';
import { SOCKET_PATH } from './platform/realtime/socket-path.js';
import { collectWhenQuiet } from './platform/processes/quiet-collection.js';
import { VERSION } from './version.js';

/**
 * The rest of the service, loaded once the port listens: loading it is much of a start's time, and
 * meanwhile the port answers 503 `starting` rather than refusing connections.
 */
async function loadService() {
  const [{ buildApp }, { openPlatform, closePlatform }, { bootstrapFirstAdmin }, { defineJobs, scheduleJobs }] = await Promise.all([
    import('./app.js'),
    import('./platform/platform.js'),
    import('./bootstrap.js'),
    import('./jobs.js'),
  ]);
  return { buildApp, openPlatform, closePlatform, bootstrapFirstAdmin, defineJobs, scheduleJobs };
}
type Service = Awaited<ReturnType<typeof loadService>>;

const ROLES: ProcessRole[] = ['all', 'api', 'worker'];
/** The log's writes: lines gathered up to this size, and written at least this often. */
const LOG_BATCH_BYTES = 65_536;
const LOG_FLUSH_MS = 200;

async function main(): Promise<void> {
  const role = (process.argv[2] ?? process.env.ROLE ?? 'all') as ProcessRole;
  if (!ROLES.includes(role)) {
    console.error(`Unknown process role "${role}": use one of ${ROLES.join(', ')}`);
    process.exit(1);
  }
  let config;
  try {
    // Parsing reads only the environment; the embedded shape's secrets are made (once) here, at start.
    config = withSecrets(loadConfig());
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // Log lines go to stdout in batches, each written at once (platform/logging/batched-destination.ts).
  const destination = createBatchedDestination(1, { batchBytes: LOG_BATCH_BYTES, flushMs: LOG_FLUSH_MS });
  const logger = pino({ level: config.logLevel }, destination);
  const grouped = role !== 'worker' && config.apiProcesses > 1;
  // Where a start's time goes: ms since the process began, and the CPU ms of all its threads so far
  // (which a busy machine disturbs less than the wall clock).
  const phase = (name: string) => {
    const cpu = process.cpuUsage();
    logger.debug({ phase: name, ms: Math.round(performance.now()), cpuMs: Math.round((cpu.user + cpu.system) / 1000) }, 'start phase');
  };
  phase('configuration read');
  if (grouped && cluster.isPrimary) return runGroupPrimary(config, role, logger);
  // The port answers 503 `starting` from here on, while the database opens and the app is built.
  const starting = role === 'worker' || grouped ? undefined : await listenWhileStarting({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG, info: startingInfo(config) });
  phase('listening');
  // The embedded database's thread stopping on its own leaves nothing to serve from: say so and exit
  // (non-zero, so a supervisor starts the process again), instead of answering every request with an error.
  const onDatabaseLost = (error: Error) => {
    logger.fatal({ err: error }, 'the embedded database stopped; the process exits');
    process.exit(1);
  };
  // The database opens (the embedded one's thread, its files, migrations) while the rest of the service
  // loads: its thread takes the second core meanwhile. A failure is thrown where it is awaited.
  const opening = import('./platform/db/open-configured.js').then(({ openConfiguredDatabase }) => openConfiguredDatabase(config, onDatabaseLost));
  opening.catch(() => {});
  const service = await loadService();
  phase('service loaded');
  const { openPlatform, closePlatform, buildApp, defineJobs, scheduleJobs } = service;
  const platform = await openPlatform(config, logger, role, onDatabaseLost, opening);
  phase('database open');
  // In a group the first API process does it, before it says it is ready: the group serves only once
  // every process is ready (process-group.ts).
  if (!grouped || processGroupSlot() === 0) await bootstrap(service, platform, config, logger);
  phase('first admin checked');

  const app = role === 'worker' ? undefined : await buildApp({ ...platform, logger: { level: config.logLevel, stream: destination }, serverFactory: starting?.serverFactory });
  phase('app built');
  // Without an app, the jobs the modules define are defined here (buildApp defines them otherwise).
  if (!app) await defineJobs({ ...platform, log: logger });
  // Requests are served while the job queue starts (pg-boss's checks, its queues, the schedules): a job
  // sent meanwhile waits for it (queue.ts, send). A failed start still ends the process (main's catch).
  const jobsStarted = platform.jobs.start({ work: role !== 'api' }).then(() => scheduleJobs(platform.jobs, platform.database));
  jobsStarted.catch(() => {});
  if (app && grouped) await serveHandedConnections(app);
  else if (app && starting) await starting.serve(app);
  phase('serving');
  // From here on V8 optimises a function after an eighth of the work it waits for by default: a function a
  // turn runs once is otherwise optimised only after 10-20 s of a steady load, again after each quiet
  // spell. Set once serving, so the start's one-off code is not optimised for nothing (docs/decisions.md,
  // "Streaming and the turn's CPU").
  v8.setFlagsFromString(`--interrupt-budget=${SERVING_INTERRUPT_BUDGET}`);
  // The old generation grows to twice what the last full collection left before the next one, where V8
  // would choose 1.3 times for a heap it collects fast: under a stream of answers half as many full
  // collections (docs/decisions.md, "Streaming and the turn's CPU"); at rest the quiet collection compacts.
  v8.setFlagsFromString(`--heap-growing-percent=${SERVING_HEAP_GROWING_PERCENT}`);
  // After a burst of work, its garbage is collected once the process falls quiet (resident memory at rest).
  const stopQuietCollection = collectWhenQuiet();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stopQuietCollection();
    const deadline = setTimeout(() => {
      logger.error('in-flight work did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 5_000);
    deadline.unref();
    try {
      if (app) await closeWithin(app.close(), config.shutdownGraceMs);
      await closePlatform(platform);
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A stop while the queue starts ends its start; that is not a failed start.
  await jobsStarted.catch((error) => {
    if (!stopping) throw error;
  });
  phase('jobs started');
  if (!grouped && !stopping) logger.info({ role, port: app ? config.port : undefined }, 'service started');
}

/** V8's interrupt budget while serving: an eighth of its default (67,584 on Node 20), measured in bench:stream. */
const SERVING_INTERRUPT_BUDGET = 8_448;

/** How much the old generation may grow past what a full collection left, while serving: 100%, twice. */
const SERVING_HEAP_GROWING_PERCENT = 100;

function startingInfo(config: StartedConfig): StartingInfo {
  return { version: VERSION, database: config.databaseUrl ? 'postgres' : 'pglite', redis: Boolean(config.redisUrl) };
}

async function bootstrap(service: Service, platform: Platform, config: StartedConfig, logger: Logger): Promise<void> {
  const result = await service.bootstrapFirstAdmin(platform.database.db, config.admin, config.billing.startingCredits);
  if (result.created) logger.info({ email: config.admin?.email }, 'created the first super admin and "Default Twin"');
}

/**
 * The primary of API_PROCESSES API processes: listens at once (503 `starting` until the group is up),
 * starts the processes (each migrates under a lock; the first makes the first admin), hands them the
 * connections, and on SIGTERM/SIGINT stops accepting and waits for each to finish its in-flight requests.
 * The primary never loads the service: it stays small (docs/decisions.md, "The service as deployed").
 */
async function runGroupPrimary(config: StartedConfig, role: ProcessRole, logger: Logger): Promise<void> {
  // The primary only reads request lines and hands sockets over: its young generation stays at its first
  // size instead of doubling under a burst of connections and staying so (docs/decisions.md, "The service
  // as deployed"). Read by V8 at each growth, so set here it holds for this process only.
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  const group = await startProcessGroup({
    processes: config.apiProcesses,
    port: config.port,
    host: config.host,
    socketPath: SOCKET_PATH,
    log: logger,
    starting: startingInfo(config),
  });
  logger.info({ role, port: group.port, processes: config.apiProcesses }, 'service started');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('the API processes did not stop in time; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 10_000).unref();
    await group.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function closeWithin(closing: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([closing, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
}

main().catch((error) => {
  console.error('Failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
