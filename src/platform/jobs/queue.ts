// The durable job queue: pg-boss 10 on the service's own database (PGlite or PostgreSQL), behind one
// job shape (payload schema, perform, retries with backoff). It owns the pg-boss schema `pgboss`, the
// workers of this process, and a clean shutdown that leaves no timer or query behind. A working process
// records which jobs it runs and takes back those of a process that is gone (recovery.ts).
// Jobs are typed: Jobs maps each job's name to its payload, so define, send and schedule are checked at
// compile time, and each payload is checked against its schema at send and before perform.
import { setTimeout as sleep } from 'node:timers/promises';
import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { DatabaseHandle } from '../db/client.js';
import type { ProcessLiveness } from '../processes/liveness.js';
import { forgetAttempt, heldAttempts, recordAttempt, recoverAbandonedJobs, type RecoveredJob } from './recovery.js';

/**
 * Every job of the service: its name → its payload. The platform cannot import the families, so each
 * family declares its jobs beside their payload schema:
 *
 *   declare module '../../platform/jobs/queue.js' { interface Jobs { 'files.ingest': IngestPayload } }
 *
 * `grep -rn "interface Jobs" src` lists them all.
 */
export interface Jobs {}

/** A map of job names to payloads: Jobs for the service, another for tests of the queue itself. */
export type JobMap = object;

/** The name of a job of the map M. */
export type JobName<M extends JobMap = Jobs> = keyof M & string;

export interface JobContext {
  jobId: string;
  /** 1 on the first try, 2 on the first retry, ... */
  attempt: number;
  /** Aborted when the job expires or the queue stops; a perform that ignores it is abandoned (and retried). */
  signal: AbortSignal;
}

/**
 * pg-boss 10 queue policies. A singletonKey only deduplicates in a policy queue:
 * short = one queued job per key, singleton = one active job per key, stately = one per state per key.
 */
export type JobPolicy = 'standard' | 'short' | 'singleton' | 'stately';

export interface JobDefinition<P, N extends string = string> {
  name: N;
  /** Validated at send and again before perform; it must describe a JSON object (that is what is stored). */
  schema: z.ZodType<P>;
  /** Must be idempotent: a job may run again after a crash, an expiry or a shutdown. */
  perform(payload: P, context: JobContext): Promise<void>;
  /**
   * Told when an attempt was abandoned by a process that died and no retry is left (the job is failed):
   * undo or mark what the attempt left, as a perform's own final failure would. A job that is retried
   * instead runs perform again, which cleans up after the earlier attempt itself.
   */
  abandoned?(payload: P, context: { jobId: string; attempt: number }): Promise<void>;
  retryLimit?: number;
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
  /** How many jobs of this name this process runs at once. */
  concurrency?: number;
  policy?: JobPolicy;
}

export interface SendOptions {
  singletonKey?: string;
  /** A moment, or a number of seconds from now. */
  startAfter?: Date | number;
}

export interface JobQueue<M extends JobMap = Jobs> {
  define<N extends JobName<M>>(definition: JobDefinition<M[N], N>): void;
  send<N extends JobName<M>>(name: N, payload: M[N], options?: SendOptions): Promise<string | null>;
  /** Without a payload, the job runs with {} (its schema must accept it). */
  schedule<N extends JobName<M>>(name: N, cron: string, payload?: M[N]): Promise<void>;
  /** Creates the pg-boss schema and queues; with work: true also starts the workers of every defined job (roles 'all' and 'worker'). */
  start(options: { work: boolean }): Promise<void>;
  stop(options?: { graceful?: boolean; timeoutMs?: number }): Promise<void>;
  /** For tests and health: wait until no job of this name is pending or active (poll), with a timeout. */
  drain(name: JobName<M>, timeoutMs?: number): Promise<void>;
}

export interface JobLogger {
  info(o: object, m?: string): void;
  error(o: object, m?: string): void;
}

export interface JobQueueOptions {
  logger?: JobLogger;
  /** How often an idle worker asks the database for work. PGlite is one connection, so keep it modest. */
  pollingIntervalSeconds?: number;
  /** How often a working process expires jobs abandoned by a dead worker and checks cron schedules (tests shorten it). */
  superviseIntervalSeconds?: number;
  /**
   * This process's liveness (the platform's, started and stopped by it): with it, a working queue records
   * its attempts and takes back those of gone processes. Without (bare queues in tests), only pg-boss's
   * expiry brings back a dead worker's job.
   */
  liveness?: ProcessLiveness;
}

interface Registered {
  definition: JobDefinition<unknown>;
  /** The queue row exists and this process's workers run; send and drain wait for it. */
  ready?: Promise<void>;
  workerIds: string[];
}

type PgBossJob = PgBoss.JobWithMetadata<unknown>;

const SCHEMA = 'pgboss';
const DEFAULTS = { retryLimit: 5, retryDelaySeconds: 2, retryBackoff: true, expireInSeconds: 15 * 60, concurrency: 1 };
const DRAIN_POLL_MS = 100;
const DEADLOCK = '40P01';
/** The cadence of pg-boss 10's check that stopped workers have ended (manager.offWork). */
const REAPER_TICK_MS = 1_000;
const silentLogger: JobLogger = { info() {}, error() {} };
/** Starts of queues on one database handle, one after the other (see start()). */
const startsByDatabase = new WeakMap<DatabaseHandle, Promise<unknown>>();

export function createJobQueue<M extends JobMap = Jobs>(database: DatabaseHandle, options: JobQueueOptions = {}): JobQueue<M> {
  const logger = options.logger ?? silentLogger;
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 2;
  const registry = new Map<string, Registered>();
  const running = new Set<AbortController>();
  /** The running performs by job id, to abort one whose attempt was taken back from this process. */
  const runningJobs = new Map<string, { controller: AbortController; recorded: boolean }>();
  let liveness: ProcessLiveness | null = null;
  let stopRecovery: (() => void) | null = null;
  const pendingSql = new Set<Promise<unknown>>();
  /** The pg-boss instance from start() until stop() has finished. */
  let boss: PgBoss | null = null;
  /** Set once pg-boss has started and until stop() begins: a job defined meanwhile is prepared at once. */
  let live: PgBoss | null = null;
  let starting: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  let working = false;
  /** Set when running performs are aborted: a job fetched after that is failed (and retried) untouched. */
  let aborting = false;
  /** Queue preparations run one at a time: concurrent create_queue calls deadlock on PostgreSQL. */
  let preparing: Promise<unknown> = Promise.resolve();
  let performsStarted = 0;

  function registered(name: string): Registered {
    const entry = registry.get(name);
    if (!entry) throw new Error(`No job named '${name}' is defined`);
    return entry;
  }

  function started(): PgBoss {
    if (!boss) throw new Error('The job queue is not started');
    return boss;
  }

  async function prepare(instance: PgBoss, entry: Registered): Promise<void> {
    const { definition } = entry;
    const queue = queueSettings(definition);
    // Processes starting at once on a fresh database still race here; PostgreSQL then kills one side.
    await retryOnDeadlock(() => instance.createQueue(definition.name, queue));
    // createQueue leaves an existing queue alone; this keeps its retry and expiry settings in step with the code.
    await retryOnDeadlock(() => instance.updateQueue(definition.name, queue));
    if (!working) return;
    const concurrency = definition.concurrency ?? DEFAULTS.concurrency;
    // One polling worker per slot rather than one batch: pg-boss completes or fails a batch as a whole.
    for (let slot = 0; slot < concurrency; slot += 1) {
      const id = await instance.work<unknown>(
        definition.name,
        { batchSize: 1, includeMetadata: true, pollingIntervalSeconds },
        async (jobs: PgBossJob[]) => {
          for (const job of jobs) await perform(definition, job);
        },
      );
      entry.workerIds.push(id);
    }
  }

  function enqueuePrepare(instance: PgBoss, entry: Registered): Promise<void> {
    const ready = preparing.then(() => prepare(instance, entry));
    preparing = ready.catch(() => {});
    entry.ready = ready;
    return ready;
  }

  async function perform(definition: JobDefinition<unknown>, job: PgBossJob): Promise<void> {
    const controller = new AbortController();
    const attempt = job.retryCount + 1;
    const expireInSeconds = Math.max(1, Number(job.expireInSeconds));
    // pg-boss gives up on a handler at the same moment; aborting tells the perform to stop too.
    const expiry = setTimeout(() => controller.abort(new Error(`job expired after ${expireInSeconds}s`)), expireInSeconds * 1000);
    const begun = Date.now();
    performsStarted += 1;
    running.add(controller);
    const tracked = { controller, recorded: false };
    runningJobs.set(job.id, tracked);
    // On an exclusive database (PGlite) every active job at start is abandoned, and while the process runs
    // nobody else takes jobs back: the attempt rows would cost two writes a job for nothing.
    const processId = liveness && !liveness.exclusive ? liveness.id : undefined;
    try {
      if (aborting) throw new Error('job queue is stopping');
      const payload = parse(definition, job.data);
      if (processId) await recordAttempt(database, job.id, definition.name, processId);
      tracked.recorded = true;
      const work = Promise.resolve().then(() => definition.perform(payload, { jobId: job.id, attempt, signal: controller.signal }));
      // An abandoned perform may still reject later; that must not become an unhandled rejection.
      work.catch(() => {});
      await Promise.race([work, rejectOnAbort(controller.signal)]);
      logger.info({ job: definition.name, jobId: job.id, attempt, durationMs: Date.now() - begun }, 'job done');
    } catch (err) {
      logger.error({ err, job: definition.name, jobId: job.id, attempt, durationMs: Date.now() - begun }, 'job failed');
      throw err; // pg-boss marks the attempt failed and schedules the retry
    } finally {
      clearTimeout(expiry);
      running.delete(controller);
      runningJobs.delete(job.id);
      // pg-boss completes or fails the job right after; a crash in between leaves an active job without a
      // row, which recovery takes back after the timeout.
      if (processId) await forgetAttempt(database, job.id, processId).catch((err: unknown) => logger.error({ err, jobId: job.id }, 'job attempt row not removed'));
    }
  }

  /** After each beat of a working process: give up performs taken back from it, take back those of gone processes. */
  async function recover(instance: PgBoss, self: ProcessLiveness, atStart = false): Promise<void> {
    // Alone on its data, a process has only its own jobs running once it started: nothing to take back.
    if (self.exclusive && !atStart) return;
    // Only performs whose row was written before the look count: one starting now may not show yet.
    const recorded = [...runningJobs].filter(([, tracked]) => tracked.recorded);
    if (recorded.length > 0) {
      const held = await heldAttempts(database, self.id);
      for (const [jobId, { controller }] of recorded) {
        if (!held.has(jobId)) controller.abort(new Error('job taken back: this process was not heard from in time'));
      }
    }
    // At an exclusive start no other process can be running anything: every active job is abandoned.
    const rowlessAfterSeconds = atStart && self.exclusive ? 0 : self.timeoutSeconds;
    const recovered = await recoverAbandonedJobs(database, instance, { processId: self.id, timeoutSeconds: self.timeoutSeconds, rowlessAfterSeconds });
    for (const job of recovered) await afterRecovery(instance, job);
  }

  async function afterRecovery(instance: PgBoss, job: RecoveredJob): Promise<void> {
    logger.error({ job: job.name, jobId: job.id, attempt: job.attempt, next: job.state }, 'job abandoned by a gone process taken back');
    const entry = registry.get(job.name);
    if (job.state === 'retry') {
      for (const workerId of entry?.workerIds ?? []) instance.notifyWorker(workerId);
      return;
    }
    const abandoned = entry?.definition.abandoned;
    if (!entry || !abandoned) return;
    try {
      await abandoned(parse(entry.definition, job.data), { jobId: job.id, attempt: job.attempt });
    } catch (err) {
      logger.error({ err, job: job.name, jobId: job.id }, 'job abandoned: clean-up failed');
    }
  }

  /** What pg-boss runs its SQL on: the service's handle, with each query tracked so stop() can wait for them. */
  const bossDb: PgBoss.Db = {
    executeSql(text, values) {
      const query = executeForBoss(database, text, values);
      pendingSql.add(query);
      query.then(
        () => pendingSql.delete(query),
        () => pendingSql.delete(query),
      );
      return query;
    },
  };

  function abortRunning(): void {
    aborting = true;
    for (const controller of running) controller.abort(new Error('job queue is stopping'));
  }

  /** A working process takes back, before its workers fetch anything, what gone processes left, then after each beat. */
  async function startRecovery(instance: PgBoss): Promise<void> {
    const current = options.liveness;
    if (!current) return;
    liveness = current;
    await recover(instance, current, true);
    stopRecovery = current.onBeat(() => recover(instance, current));
  }

  function stopLiveness(): void {
    stopRecovery?.();
    stopRecovery = null;
    liveness = null;
  }

  return {
    define(definition) {
      if (registry.has(definition.name)) throw new Error(`Job '${definition.name}' is already defined`);
      checkDefinition(definition);
      const entry: Registered = { definition: definition as unknown as JobDefinition<unknown>, workerIds: [] };
      registry.set(definition.name, entry);
      if (live) {
        enqueuePrepare(live, entry).catch((err: unknown) => logger.error({ err, job: definition.name }, 'job queue could not be prepared'));
      }
    },

    async send(name, payload, sendOptions = {}) {
      const entry = registered(name);
      const data = parse(entry.definition, payload);
      if (sendOptions.singletonKey !== undefined && (entry.definition.policy ?? 'standard') === 'standard') {
        throw new Error(`Job '${name}': singletonKey has no effect in a standard queue; give the job a policy (short, singleton or stately)`);
      }
      if (starting) await starting;
      const instance = started();
      await entry.ready;
      const id = await instance.send(name, data, { singletonKey: sendOptions.singletonKey, startAfter: sendOptions.startAfter });
      // A local worker need not wait for its next poll (the embedded shape has only local workers).
      if (id && (sendOptions.startAfter === undefined)) for (const workerId of entry.workerIds) instance.notifyWorker(workerId);
      return id;
    },

    async schedule(name, cron, payload) {
      const entry = registered(name);
      const data = parse(entry.definition, payload ?? {});
      if (starting) await starting;
      const instance = started();
      await entry.ready;
      // Schedules live in the database, keyed by job name; any working process with supervision sends them.
      await instance.schedule(name, cron, data, { tz: 'UTC' });
    },

    async start({ work }: { work: boolean }): Promise<void> {
      if (starting) return starting;
      if (stopping) await stopping;
      if (boss) throw new Error('The job queue is already started');
      const supervise = options.superviseIntervalSeconds;
      const instance = new PgBoss({
        db: bossDb,
        schema: SCHEMA,
        migrate: true,
        // Only working processes expire stuck jobs and send cron jobs; API processes only send.
        supervise: work,
        schedule: work,
        pollingIntervalSeconds,
        cronWorkerIntervalSeconds: Math.min(45, Math.max(1, pollingIntervalSeconds)),
        ...(supervise ? { maintenanceIntervalSeconds: supervise, cronMonitorIntervalSeconds: Math.min(45, Math.max(1, supervise)) } : {}),
      });
      // pg-boss reports background failures (maintenance, polling) as events; an unheard 'error' would crash the process.
      instance.on('error', (err) => logger.error({ err }, 'job queue error'));
      working = work;
      aborting = false;
      boss = instance;
      const run = async (): Promise<void> => {
        try {
          await instance.start();
          if (work) await startRecovery(instance);
          live = instance;
          await Promise.all([...registry.values()].map((entry) => enqueuePrepare(instance, entry)));
        } catch (err) {
          live = null;
          stopLiveness();
          await instance.stop({ graceful: false, close: false }).catch(() => {});
          await Promise.allSettled([...pendingSql]);
          boss = null;
          throw err;
        }
      };
      // Two queues starting at once on one handle would both find no schema and both create it; on PGlite
      // the loser's failed transaction then stalls the only connection (see executeForBoss).
      const previous = startsByDatabase.get(database) ?? Promise.resolve();
      starting = previous.then(run, run).finally(() => {
        starting = null;
      });
      startsByDatabase.set(database, starting.catch(() => {}));
      await starting;
      logger.info({ work, jobs: [...registry.keys()] }, 'job queue started');
    },

    async stop({ graceful = true, timeoutMs = 30_000 }: { graceful?: boolean; timeoutMs?: number } = {}): Promise<void> {
      if (stopping) return stopping;
      if (starting) await starting.catch(() => {});
      const instance = boss;
      if (!instance) return;
      live = null;
      stopping = (async () => {
        stopRecovery?.();
        stopRecovery = null;
        await Promise.allSettled([...registry.values()].map((entry) => entry.ready));
        // Our abort comes before pg-boss's own deadline, so pg-boss never fails a job whose perform still runs.
        const timer = graceful ? setTimeout(abortRunning, timeoutMs) : undefined;
        const performsBefore = performsStarted;
        // A worker in the middle of a fetch or a job when pg-boss stops it is reaped on a 1 s timer (below).
        const busy = running.size > 0 || pendingSql.size > 0;
        if (!graceful) abortRunning();
        const stopBegan = Date.now();
        try {
          await instance.stop({ graceful: true, wait: true, close: false, timeout: (graceful ? timeoutMs : 0) + 2_000 });
        } finally {
          clearTimeout(timer);
          // pg-boss fails an aborted job without awaiting it; the database must outlive that query.
          await Promise.allSettled([...pendingSql]);
          stopLiveness();
          // pg-boss looks once a second whether a worker that was busy at stop has ended; let that last
          // look pass, so no timer of the queue outlives stop().
          if (busy || performsStarted !== performsBefore) await sleep(REAPER_TICK_MS - ((Date.now() - stopBegan) % REAPER_TICK_MS) + 25);
          for (const entry of registry.values()) {
            entry.ready = undefined;
            entry.workerIds = [];
          }
          boss = null;
          working = false;
          stopping = null;
        }
        logger.info({}, 'job queue stopped');
      })();
      return stopping;
    },

    async drain(name, timeoutMs = 30_000) {
      const entry = registered(name);
      if (starting) await starting;
      const instance = started();
      await entry.ready;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // Every state before 'completed': created, retry (including a retry waiting out its delay) and active.
        const pending = await instance.getQueueSize(name, { before: 'completed' });
        if (pending === 0) return;
        if (Date.now() >= deadline) throw new Error(`Job '${name}': ${pending} job(s) still pending or active after ${timeoutMs} ms`);
        await sleep(DRAIN_POLL_MS);
      }
    },
  };
}

function queueSettings(definition: JobDefinition<unknown>): PgBoss.Queue {
  return {
    name: definition.name,
    policy: definition.policy ?? 'standard',
    retryLimit: definition.retryLimit ?? DEFAULTS.retryLimit,
    retryDelay: definition.retryDelaySeconds ?? DEFAULTS.retryDelaySeconds,
    retryBackoff: definition.retryBackoff ?? DEFAULTS.retryBackoff,
    expireInSeconds: definition.expireInSeconds ?? DEFAULTS.expireInSeconds,
  };
}

/** Fails at define, in the caller's stack, instead of later inside pg-boss. */
function checkDefinition<P>(definition: JobDefinition<P>): void {
  const { name } = definition;
  const bad = (what: string): never => {
    throw new Error(`Job '${name}': ${what}`);
  };
  if (!/^[\w.-]+$/.test(name)) bad('the name may hold only letters, digits, _, - and .');
  const isCount = (value: number | undefined, min: number): boolean => value === undefined || (Number.isInteger(value) && value >= min);
  if (!isCount(definition.retryLimit, 0)) bad('retryLimit must be an integer >= 0');
  if (!isCount(definition.retryDelaySeconds, 0)) bad('retryDelaySeconds must be an integer >= 0');
  if (!isCount(definition.concurrency, 1)) bad('concurrency must be an integer >= 1');
  const expire = definition.expireInSeconds;
  if (expire !== undefined && !(expire >= 1 && expire < 24 * 60 * 60)) bad('expireInSeconds must be between 1 and 24 hours');
}

/** The payload as the job will see it; a clear Error naming the job and the fields otherwise. */
function parse(definition: JobDefinition<unknown>, payload: unknown): object {
  const result = definition.schema.safeParse(payload);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(payload)'}: ${issue.message}`);
    throw new Error(`Job '${definition.name}': invalid payload (${issues.join('; ')})`);
  }
  const data = result.data;
  // Stored as jsonb: a plain object round-trips; a bare value or an array would not on node-postgres.
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Error(`Job '${definition.name}': the payload must be an object`);
  }
  return data;
}

async function retryOnDeadlock<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation();
    } catch (err) {
      if (attempt >= 5 || (err as { code?: unknown }).code !== DEADLOCK) throw err;
      await sleep(50 * attempt + Math.random() * 100);
    }
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * pg-boss sends its locked blocks (BEGIN; ...; COMMIT) as one parameterless text. If a statement in
 * one fails, the session stays in the aborted transaction; on PGlite that session is the only one, so
 * every later query of the whole service would fail. Roll it back before reporting the error.
 */
async function executeForBoss(database: DatabaseHandle, text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
  try {
    return await database.executeSql(text, values);
  } catch (err) {
    if (database.kind === 'pglite' && !values?.length && /^\s*BEGIN\b/i.test(text)) {
      await database.executeSql('ROLLBACK').catch(() => {});
    }
    throw err;
  }
}
