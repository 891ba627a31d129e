// Builds what a test run shares, once: the compiled service and the embedded database's empty cluster
// (as the start command's prestart does; tests that start service processes run them) and one migrated
// database template: a PGlite data-dir folder and its tarball by default, or a template database on the
// PostgreSQL server when TEST_DATABASE_URL is set. Each test file clones it. The template holds
// pg-boss's schema as a service's first start leaves it (the queues' rows aside), so a file's queue or a
// process's start does not make it again (about 0.4 s of CPU each).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/client.js';
import { ensureEmptyCluster } from '../../src/platform/db/empty-cluster.js';
import { createJobQueue } from '../../src/platform/jobs/queue.js';
import { withDatabase } from './urls.js';
import { ensureServerBuilt } from '../../scripts/build-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgliteDataDir: string;
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  await ensureServerBuilt();
  // The embedded database's empty cluster, as the start command's prestart makes it: service processes
  // started on a new data folder copy it. Made beside the template, which PGlite's initdb makes (so a run
  // also takes the start's path without the cluster).
  const clusterMade = ensureEmptyCluster();
  clusterMade.catch(() => {});
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dt-test-'));
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    // Migrated once in a data folder, as a service's first start makes it: service processes start on a
    // copy of the folder (test/support/database.ts, seedDataDir), test files load its tarball in memory.
    const dataDir = path.join(dir, 'data');
    const handle = await openDatabase({ dataDir });
    await installJobSchema(handle);
    const file = path.join(dir, 'template.tar');
    writeFileSync(file, await handle.dumpDataDir!());
    await handle.close();
    await clusterMade;
    project.provide('pgliteTemplate', file);
    project.provide('pgliteDataDir', dataDir);
    project.provide('postgresTemplate', '');
    return () => rmSync(dir, { recursive: true, force: true });
  }

  const templateName = `dt_template_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${templateName}`);
  const handle = await openDatabase({ databaseUrl: withDatabase(serverUrl, templateName), poolSize: 1 });
  await installJobSchema(handle);
  await handle.close();
  await clusterMade;
  project.provide('pgliteTemplate', '');
  project.provide('pgliteDataDir', '');
  project.provide('postgresTemplate', templateName);
  return async () => {
    const leftovers = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1`,
      [`dt_t_${process.pid}_%`],
    );
    for (const { datname } of leftovers.rows) await admin.query(`drop database if exists ${datname} with (force)`);
    await admin.query(`drop database if exists ${templateName} with (force)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  };
}

/** pg-boss's schema, made as a queue's first start makes it (no job defined, so no queue row). */
async function installJobSchema(handle: DatabaseHandle): Promise<void> {
  const jobs = createJobQueue(handle);
  await jobs.start({ work: false });
  await jobs.stop({ graceful: false, timeoutMs: 2_000 });
}
