// The embedded database from the main thread: PGlite runs in a worker thread (pglite-worker.ts) and this
// client speaks to it with the part of PGlite's interface the service uses: `query` and `transaction`
// (drizzle's), `exec`, `listen`, `dumpDataDir` and `close`. Statements of a transaction carry its id; the
// worker's PGlite keeps every other statement waiting until it ends, as on one connection. A database
// error comes back with the fields PostgreSQL sent (code, constraint, ...), so callers read it as before.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { QueryOptions, Results } from '@electric-sql/pglite';

export interface ThreadInit {
  /** The data folder; in memory without one. */
  dataDir?: string;
  /** A data-dir tarball to start from (tests load a migrated template). */
  template?: Uint8Array;
  /** An empty cluster copied into a data folder that is new (empty-cluster.ts). */
  emptyCluster?: string;
  /** Crash harness only (FAULT_KILL_AT=database:<n>): the thread stops after answering this many statements. */
  stopAfter?: number;
}

type RowMode = 'array' | 'object';
export type ThreadRequest =
  | { id: number; op: 'query'; text: string; params?: unknown[]; rowMode?: RowMode; textTypes?: number[]; tx?: number }
  | { id: number; op: 'exec'; text: string; tx?: number }
  | { id: number; op: 'begin'; tx: number }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen' | 'unlisten'; channel: string }
  | { id: number; op: 'dump' | 'close' };

export interface WireError {
  message: string;
  name?: string;
  fields: Record<string, unknown>;
}

export type ThreadAnswer = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WireError };
type Notice = { notify: true; channel: string; payload: string };
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

/** A database error raised in the worker, with the fields PostgreSQL sent. */
export class ThreadedDatabaseError extends Error {
  [field: string]: unknown;
  constructor(wire: WireError) {
    super(wire.message);
    Object.assign(this, wire.fields);
    this.name = wire.name ?? 'DatabaseError';
  }
}

/** What a statement runs on: the database, or the transaction it belongs to. */
export interface ThreadQueries {
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(text: string): Promise<Array<Results>>;
}

export interface PgliteThread extends ThreadQueries {
  transaction<T>(fn: (tx: ThreadQueries) => Promise<T>): Promise<T>;
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  dumpDataDir(): Promise<Uint8Array>;
  readonly closed: boolean;
  close(): Promise<void>;
}

const FROM_SOURCE = import.meta.url.split('?')[0].endsWith('.ts');
const WORKER_URL = new URL(`./pglite-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);

/**
 * The thread's young generation: 12 MB (4 MB semi-spaces) rather than the process's 16 MB semi-spaces
 * (`--max-semi-space-size=16`, V8 flags are the process's): the thread's objects are statements and
 * results on their way across, short-lived and few at a time, and its new space, grown to 32 MB at the
 * first busy moment, stayed resident (docs/decisions.md, "The service as deployed").
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 12 };

/**
 * Run from TypeScript sources (as `npm start` and the tests run), the worker loads its module through
 * tsx's API: a worker thread does not take the `--import tsx` hooks of its process on Node 20.
 */
function startWorker(init: ThreadInit, compiled?: URL): Worker {
  if (compiled || !FROM_SOURCE) return new Worker(compiled ?? WORKER_URL, { workerData: init, resourceLimits: THREAD_LIMITS });
  // The package's `import` build of tsx/esm/api (its `require` one cannot register from a worker).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then(({ tsImport }) => tsImport(${JSON.stringify(WORKER_URL.href)}, ${JSON.stringify(import.meta.url)}))`;
  return new Worker(bootstrap, { eval: true, workerData: init, resourceLimits: THREAD_LIMITS });
}

/**
 * Starts the worker and resolves once its PGlite is open (and its template loaded). `onLost` hears once
 * if the thread stops while open (not closed): every statement fails from then on, and it cannot come
 * back, since the database's state was the thread's. `compiledWorker`: the worker's compiled module to run
 * instead of the one beside this file (test/support/database.ts: tsx in each new thread cost ~0.4 s of CPU).
 */
export async function openPgliteThread(init: ThreadInit = {}, onLost?: (error: Error) => void, compiledWorker?: URL): Promise<PgliteThread> {
  const worker = startWorker(init, compiledWorker);
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(payload: string) => void>>();
  let nextId = 0;
  let nextTx = 0;
  let closed = false;
  let started = false;
  let stopped: Error | undefined;

  const settle = (message: ThreadAnswer): void => {
    const entry = waiting.get(message.id);
    if (!entry) return;
    waiting.delete(message.id);
    if (message.ok) entry.resolve(message.result);
    else entry.reject(new ThreadedDatabaseError(message.error));
  };
  worker.on('message', (message: ThreadAnswer | ThreadAnswer[] | Notice) => {
    // A group commit's answers come as one message, in the order of its statements.
    if (Array.isArray(message)) message.forEach(settle);
    else if ('notify' in message) for (const listener of listeners.get(message.channel) ?? []) listener(message.payload);
    else settle(message);
  });
  const stop = (error: Error) => {
    const first = !stopped;
    stopped ??= error;
    for (const entry of waiting.values()) entry.reject(stopped);
    waiting.clear();
    if (first && !closed && started) onLost?.(stopped);
  };
  worker.on('error', (error) => stop(new Error(`the database thread failed: ${error.message}`, { cause: error })));
  worker.on('exit', (code) => stop(new Error(`the database thread stopped (exit code ${code})`)));

  function send<T>(request: Unsent<ThreadRequest>): Promise<T> {
    if (stopped) return Promise.reject(stopped);
    if (closed) return Promise.reject(new Error('the database thread stopped (closed)'));
    const id = ++nextId;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ ...request, id });
    });
  }

  const queriesOf = (tx?: number): ThreadQueries => ({
    query: async <T>(text: string, params?: unknown[], options?: QueryOptions) =>
      send<Results<T>>({ op: 'query', text, params, rowMode: options?.rowMode, textTypes: textTypesOf(options), tx }),
    exec: (text: string) => send<Array<Results>>({ op: 'exec', text, tx }),
  });

  const thread: PgliteThread = {
    ...queriesOf(),
    async transaction<T>(fn: (tx: ThreadQueries) => Promise<T>): Promise<T> {
      const tx = ++nextTx;
      await send({ op: 'begin', tx });
      let result: T;
      try {
        result = await fn(queriesOf(tx));
      } catch (error) {
        await send({ op: 'end', tx, commit: false }).catch(() => {});
        throw error;
      }
      await send({ op: 'end', tx, commit: true });
      return result;
    },
    async listen(channel, onPayload) {
      let set = listeners.get(channel);
      if (!set) listeners.set(channel, (set = new Set()));
      set.add(onPayload);
      await send({ op: 'listen', channel });
      return async () => {
        set.delete(onPayload);
        if (set.size > 0 || listeners.get(channel) !== set) return;
        listeners.delete(channel);
        if (!closed && !stopped) await send({ op: 'unlisten', channel });
      };
    },
    async dumpDataDir() {
      return new Uint8Array(await send<ArrayBuffer>({ op: 'dump' }));
    },
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      const answered = send({ op: 'close' });
      closed = true;
      await answered.catch(() => {});
      await worker.terminate();
    },
  };
  // The first answer comes once PGlite is ready: a failed start (a damaged data folder) fails here.
  try {
    await thread.query('select 1');
    started = true;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return thread;
}

/**
 * The types a query's parsers leave as text. Only such parsers cross to the worker (drizzle passes
 * `(value) => value` for dates, timestamps and intervals); any other is refused rather than ignored.
 */
const checked = new WeakMap<object, number[]>();
function textTypesOf(options: QueryOptions | undefined): number[] | undefined {
  const parsers = options?.parsers;
  if (!parsers) return undefined;
  let types = checked.get(parsers);
  if (!types) {
    types = Object.keys(parsers).map(Number);
    for (const type of types) {
      const probe = '2026-01-01 00:00:00+00';
      if ((parsers[type] as (value: string, type: number) => unknown)(probe, type) !== probe) throw new Error(`a parser of type ${type} cannot run in the database thread`);
    }
    checked.set(parsers, types);
  }
  return types;
}
