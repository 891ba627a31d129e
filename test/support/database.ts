// A database of its own for each test file, cloned from the run's migrated template:
// PGlite in memory loaded from the template tarball, or a new database on the PostgreSQL server.
// A PGlite database a file has closed is emptied and lent to the worker's next file (lentPglite below).
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { withDatabase } from './urls.js';
import { inject } from 'vitest';
import { openDatabase, pgliteHandle, type DatabaseHandle } from '../../src/platform/db/client.js';
import { openPgliteThread, type PgliteThread } from '../../src/platform/db/pglite-thread.js';

export interface TestDatabase extends DatabaseHandle {
  /** The URL of the per-file database on the server (undefined on PGlite). */
  url?: string;
}

/**
 * The embedded database's thread as the global set-up compiled it (dist/, from the same sources): a
 * thread started from TypeScript loads tsx first, about 0.4 s of CPU for each of the run's hundreds of
 * databases.
 */
export const PGLITE_WORKER = new URL('../../dist/platform/db/pglite-worker.js', import.meta.url);

let counter = 0;
let template: Uint8Array | undefined;

export async function openTestDatabase(): Promise<TestDatabase> {
  const postgresTemplate = inject('postgresTemplate');
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!postgresTemplate || !serverUrl) {
    return lentPglite();
  }
  // The name carries the vitest main process id (the parent of this fork), so teardown finds leftovers.
  const name = `dt_t_${process.ppid}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  await adminQuery(serverUrl, `create database ${name} template ${postgresTemplate}`);
  const url = withDatabase(serverUrl, name);
  const handle = await openDatabase({ databaseUrl: url, migrate: false, poolSize: 5 });
  return {
    ...handle,
    url,
    async close() {
      await handle.close();
      await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * A new DATA_DIR for a service process of the embedded shape, its PGlite folder a copy of the run's
 * migrated template: the process starts as on its second start (its migrations already applied), not
 * its first (a new cluster, then every migration: about 4 s of CPU more). Tests of a first start use
 * an empty folder instead. Empty on PostgreSQL runs, whose service processes take a database of their own.
 */
export function seededDataDir(prefix: string): string {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const templateDir = inject('pgliteDataDir');
  if (templateDir) cpSync(path.join(templateDir, 'pglite'), path.join(dataDir, 'pglite'), { recursive: true });
  return dataDir;
}

/**
 * The worker's PGlite thread a file has closed, kept for the next file: a thread loaded from the template
 * costs 1.2-1.7 s of CPU (PGlite's files, the tarball, PostgreSQL's start), emptying it a few
 * milliseconds. Emptied, it holds no row a file wrote: every table of the service's schema and of pg-boss's
 * truncated (but pg-boss's install and queues), their sequences restarted, the session's settings,
 * temporary tables and advisory locks reset. A file's handle is fenced once it
 * closes (a late statement of its own fails as on a closed database, rather than reaching the next file's),
 * and what it still heard (LISTEN) is dropped.
 */
let spare: PgliteThread | undefined;
/** The schemas of the template, as the first thread of the worker opened it (a schema made since is emptied too). */
let templateSchemas: string[] | undefined;
const EMPTYING_BOUND_MS = 10_000;

async function lentPglite(): Promise<TestDatabase> {
  let thread = spare;
  spare = undefined;
  if (thread && !(await emptied(thread))) {
    await thread.close();
    thread = undefined;
  }
  if (!thread) {
    // Read once per worker (files of a worker run one after another, on the same modules).
    template ??= readFileSync(inject('pgliteTemplate'));
    thread = await openPgliteThread({ template }, undefined, PGLITE_WORKER);
    templateSchemas ??= (await thread.query<{ nspname: string }>('select nspname from pg_namespace')).rows.map((row) => row.nspname);
  }
  const lent = fenced(thread);
  const handle = pgliteHandle(lent.client);
  let closed = false;
  return {
    ...handle,
    async close() {
      if (closed) return;
      closed = true;
      await lent.release();
      if (spare || thread.closed) await thread.close();
      else spare = thread;
    },
  };
}

/**
 * pg-boss's install and its queue rows stay (a file's queue finds a queue an earlier file made, as a
 * service's later start finds its own). A thread whose pg-boss schema was dropped and made again fetched no
 * job after (its kept statements), so the schema is never dropped.
 */
const KEPT_TABLES = ['pgboss.version', 'pgboss.queue'];

/** Empties a thread for the next file; false when it did not answer in time (a transaction left open). */
async function emptied(thread: PgliteThread): Promise<boolean> {
  const emptying = (async () => {
    const tables = await thread.query<{ name: string }>(
      `select format('%I.%I', schemaname, tablename) as name from pg_tables
        where (schemaname in ('public', 'pgboss') or schemaname <> all($1)) and schemaname not like 'pg\\_%'
          and schemaname || '.' || tablename <> all($2)`,
      [templateSchemas, KEPT_TABLES],
    );
    await thread.exec([
      `truncate ${tables.rows.map((row) => row.name).join(', ')} restart identity cascade`,
      'select pg_advisory_unlock_all()',
      'discard temp',
      'reset all',
      'set wal_init_zero = off',
    ].join(';\n'));
    return true;
  })();
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), EMPTYING_BOUND_MS)));
  try {
    return await Promise.race([emptying.catch(() => false), bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** A thread as one file sees it: after release(), its statements fail and its LISTENs are gone. */
function fenced(thread: PgliteThread): { client: PgliteThread; release(): Promise<void> } {
  let open = true;
  const listening = new Set<() => Promise<void>>();
  const refused = () => Promise.reject(new Error('the database thread stopped (closed)'));
  const client: PgliteThread = {
    query: (text, params, options) => (open ? thread.query(text, params, options) : refused()),
    exec: (text) => (open ? thread.exec(text) : refused()),
    transaction: (fn) => (open ? thread.transaction(fn) : refused()),
    async listen(channel, onPayload) {
      if (!open) return refused();
      const unlisten = await thread.listen(channel, onPayload);
      const once = async () => {
        if (!listening.delete(once)) return;
        await unlisten();
      };
      listening.add(once);
      return once;
    },
    dumpDataDir: () => (open ? thread.dumpDataDir() : refused()),
    get closed() {
      return !open || thread.closed;
    },
    async close() {
      open = false;
    },
  };
  return {
    client,
    async release() {
      open = false;
      for (const unlisten of [...listening]) await unlisten().catch(() => {});
    },
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
