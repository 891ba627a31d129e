// A database of its own for each test file, cloned from the run's migrated template:
// PGlite in memory loaded from the template tarball, or a new database on the PostgreSQL server.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { withDatabase } from './urls.js';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/client.js';

export interface TestDatabase extends DatabaseHandle {
  /** The URL of the per-file database on the server (undefined on PGlite). */
  url?: string;
}

let counter = 0;

export async function openTestDatabase(): Promise<TestDatabase> {
  const template = inject('postgresTemplate');
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!template || !serverUrl) {
    return openDatabase({ template: readFileSync(inject('pgliteTemplate')), migrate: false });
  }
  // The name carries the vitest main process id (the parent of this fork), so teardown finds leftovers.
  const name = `dt_t_${process.ppid}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  await adminQuery(serverUrl, `create database ${name} template ${template}`);
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

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
