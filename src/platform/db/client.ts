// One query layer over two drivers: PGlite (embedded, with pgvector) and a PostgreSQL server.
// Migrations are applied here, in code, under an advisory lock so several processes may start at once.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { PgTransaction, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { openPgliteThread, type PgliteThread } from './pglite-thread.js';
import { registerDirectRunner } from './direct-runner.js';

export type Database = PgDatabase<PgQueryResultHKT, Record<string, never>>;
export type Transaction = PgTransaction<PgQueryResultHKT, Record<string, never>, ExtractTablesWithRelations<Record<string, never>>>;
/** What a repository runs its queries on: the database, or a transaction a service opened. */
export type Executor = Database | Transaction;

export type DatabaseKind = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Database;
  kind: DatabaseKind;
  /** True when the pgvector extension is installed (always on PGlite). */
  vector: boolean;
  /** Raw SQL for libraries that bring their own (pg-boss). Parameterless text may hold several statements. */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
  ping(): Promise<boolean>;
  /**
   * Hears NOTIFY payloads on a channel (on PGlite, before the committing query resolves; on a server,
   * on a dedicated connection that reconnects). `onLive(false)` when that connection is lost (payloads
   * may have been missed), `onLive(true)` once it listens again. Resolves when listening.
   */
  listen(channel: string, onPayload: (payload: string) => void, onLive?: (live: boolean) => void): Promise<() => Promise<void>>;
  /** The embedded database's data folder as a tarball (PGlite only: the tests' template). */
  dumpDataDir?(): Promise<Uint8Array>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL server URL; without it, PGlite is used. */
  databaseUrl?: string;
  /** Folder of the embedded database; ignored when databaseUrl is given, or memory or template. */
  dataDir?: string;
  /** The embedded database in memory only (tests, tools). */
  memory?: boolean;
  /** The embedded database in memory, loaded from a data-folder tarball (tests load a migrated template). */
  template?: Uint8Array;
  /** An empty cluster to copy into a new data folder (empty-cluster.ts); PGlite's initdb makes it otherwise. */
  emptyCluster?: string;
  /** Pool size for the PostgreSQL server. */
  poolSize?: number;
  migrate?: boolean;
  /** The embedded database's thread stopped while open: nothing it held can be had again (main.ts exits). */
  onLost?: (error: Error) => void;
  /** Crash harness only: the embedded database's thread stops after answering this many statements. */
  stopAfter?: number;
  /** Tests only: the embedded database thread's compiled module (dist/), run from sources without tsx. */
  pgliteWorker?: URL;
}

export const MIGRATIONS_FOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_LOCK = 7_240_262;

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const handle = options.databaseUrl ? await openPostgres(options.databaseUrl, options.poolSize ?? 10) : await openPglite(options);
  if (options.migrate !== false) {
    try {
      await runMigrations(handle, options.databaseUrl);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
  handle.vector = await enableVector(handle);
  return handle;
}

async function openPglite(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  // PGlite runs in a thread of its own (pglite-thread.ts): its statements take the second core instead
  // of holding every request.
  const inMemory = options.memory || options.template;
  const client = await openPgliteThread(
    {
      dataDir: inMemory ? undefined : path.join(options.dataDir ?? './data', 'pglite'),
      template: options.template,
      emptyCluster: inMemory ? undefined : options.emptyCluster,
      stopAfter: options.stopAfter,
    },
    options.onLost,
    options.pgliteWorker,
  );
  return pgliteHandle(client);
}

/** The handle over an open PGlite thread (tests lend one thread to file after file: test/support/database.ts). */
export function pgliteHandle(client: PgliteThread): DatabaseHandle {
  const db = drizzlePglite({ client: client as never }) as unknown as Database;
  // The thread keeps a statement sent twice by its text (pglite-statements.ts): the name is not needed.
  registerDirectRunner(db, (_name, text, params) => client.query<unknown[]>(text, params, { rowMode: 'array' }).then((result) => result.rows));
  return {
    db,
    kind: 'pglite',
    vector: true,
    async executeSql(text, values) {
      if (!values || values.length === 0) {
        try {
          const results = await client.exec(text);
          return { rows: results.at(-1)?.rows ?? [] };
        } catch (error) {
          // A failed statement inside a multi-statement BEGIN…COMMIT would leave the only connection
          // in an aborted transaction, failing every later query of the process.
          await client.exec('ROLLBACK').catch(() => {});
          throw error;
        }
      }
      const result = await client.query(text, values);
      return { rows: result.rows as any[] };
    },
    ping: () => client.query('select 1').then(() => true, () => false),
    async listen(channel, onPayload) {
      const unlisten = await client.listen(channel, onPayload);
      return async () => {
        if (!client.closed) await unlisten();
      };
    },
    dumpDataDir: () => client.dumpDataDir(),
    close: () => client.close(),
  };
}

async function openPostgres(url: string, max: number): Promise<DatabaseHandle> {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  pool.on('error', () => {}); // an idle client dropped by the server; the pool replaces it
  await pool.query('select 1');
  const db = drizzlePg({ client: pool }) as unknown as Database;
  registerDirectRunner(db, (name, text, params) => pool.query<unknown[]>({ name, text, values: params, rowMode: 'array' }).then((result) => result.rows));
  let closed = false;
  return {
    db,
    kind: 'postgres',
    vector: false,
    executeSql: (text, values) => pool.query(text, values as unknown[]),
    ping: () => pool.query('select 1').then(() => true, () => false),
    listen: (channel, onPayload, onLive) => listenOnServer(url, channel, onPayload, onLive),
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

const RELISTEN_MS = 1_000;

/** LISTEN on a connection of its own (pooled connections come and go); on loss, reconnects every second. */
async function listenOnServer(
  url: string,
  channel: string,
  onPayload: (payload: string) => void,
  onLive: (live: boolean) => void = () => {},
): Promise<() => Promise<void>> {
  let stopped = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    client.on('notification', (message) => {
      if (message.channel === channel) onPayload(message.payload ?? '');
    });
    client.on('error', () => {}); // 'end' follows and reconnects
    client.on('end', () => {
      if (current !== client || stopped) return;
      current = undefined;
      onLive(false);
      retry = setTimeout(reconnect, RELISTEN_MS);
    });
    await client.connect();
    try {
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    current = client;
  }

  function reconnect(): void {
    if (stopped) return;
    connect().then(
      () => (stopped ? current?.end().catch(() => {}) : onLive(true)),
      () => (retry = setTimeout(reconnect, RELISTEN_MS)),
    );
  }

  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const client = current;
    current = undefined;
    await client?.end().catch(() => {});
  };
}

async function runMigrations(handle: DatabaseHandle, databaseUrl?: string): Promise<void> {
  if (handle.kind === 'pglite') {
    await migratePglite(handle.db as never, { migrationsFolder: MIGRATIONS_FOLDER });
    return;
  }
  // One client holds the lock for the whole run, so concurrent starters wait instead of racing.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migratePg(drizzlePg({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}

/** pgvector is used where it exists; Debian's PostgreSQL 15 has none, so retrieval degrades to full text there. */
async function enableVector(handle: DatabaseHandle): Promise<boolean> {
  const available = await handle.executeSql(`select 1 from pg_available_extensions where name = 'vector'`, []);
  if (available.rows.length === 0) return false;
  try {
    await handle.db.execute(sql`create extension if not exists vector`);
    return true;
  } catch {
    // Another process starting beside this one may have made it first (the check-then-create races).
    const made = await handle.executeSql(`select 1 from pg_extension where extname = 'vector'`, []).catch(() => ({ rows: [] }));
    return made.rows.length > 0;
  }
}

/** Runs fn in one transaction. Keep it short: PGlite has a single connection. */
export function withTransaction<T>(db: Database, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}

/** Runs `fn` in the caller's transaction when `executor` is one, else in a transaction of its own. */
export function inTransaction<T>(executor: Executor, fn: (tx: Executor) => Promise<T>): Promise<T> {
  return executor instanceof PgTransaction ? fn(executor) : (executor as Database).transaction(fn);
}
