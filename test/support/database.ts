// A database of its own for each test file, cloned from the run's migrated template:
// PGlite in memory loaded from the template tarball, or a new database on the PostgreSQL server.
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { withDatabase } from './urls.js';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/client.js';

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
    // Read once per worker (files of a worker run one after another, on the same modules).
    template ??= readFileSync(inject('pgliteTemplate'));
    return openDatabase({ template, migrate: false, pgliteWorker: PGLITE_WORKER });
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

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
