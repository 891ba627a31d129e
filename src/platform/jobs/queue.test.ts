// The job queue against the real database: PGlite by default, a fresh PostgreSQL database per run of
// this file when TEST_DATABASE_URL is set. Covers delivery, retries, validation, roles, durability
// across a stopped or dead worker, cron, and a shutdown that lets the process exit.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestDatabase } from '../../../test/support/database.js';
import { openDatabase, type DatabaseHandle } from '../db/client.js';
import { emptyClusterPath } from '../db/empty-cluster.js';
import { createJobQueue, type JobLogger, type JobQueue, type JobQueueOptions } from './queue.js';

const adminUrl = process.env.TEST_DATABASE_URL;
let database: DatabaseHandle;
let databaseUrl: string | undefined;
/** Any job name, any payload: these tests are about the queue, not the service's jobs. */
type AnyJobs = Record<string, any>;
const queues: JobQueue<AnyJobs>[] = [];

beforeAll(async () => {
  if (adminUrl) {
    databaseUrl = await createDatabase(adminUrl);
    database = await openDatabase({ databaseUrl });
  } else {
    // The run's migrated template, lent to this file (a new one in memory ran initdb and every migration).
    database = await openTestDatabase();
  }
});

afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop({ graceful: false })));
});

afterAll(async () => {
  await database?.close();
  if (adminUrl && databaseUrl) await dropDatabase(adminUrl, databaseUrl);
});

describe(`job queue on ${adminUrl ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('performs a sent job with its payload', async () => {
    const seen: unknown[] = [];
    const queue = newQueue();
    queue.define({
      name: 'test.echo',
      schema: z.object({ fileId: z.string(), pages: z.number().int() }),
      perform: async (payload, context) => {
        seen.push({ payload, jobId: context.jobId, attempt: context.attempt, aborted: context.signal.aborted });
      },
    });
    await queue.start({ work: true });

    const id = await queue.send('test.echo', { fileId: 'f1', pages: 3 });
    await queue.drain('test.echo', 10_000);

    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen).toEqual([{ payload: { fileId: 'f1', pages: 3 }, jobId: id, attempt: 1, aborted: false }]);
  });

  it('performs a job sent by this process at once, however seldom its idle slots ask for work', async () => {
    // The service's API processes poll every 10 s (platform.ts): their own sends wake their slots.
    const queue = newQueue({ pollingIntervalSeconds: 3_600 });
    let performed: (payload: unknown) => void = () => {};
    const seen = new Promise((resolve) => (performed = resolve));
    queue.define({ name: 'test.woken', schema: z.object({ n: z.number() }), perform: async (payload) => performed(payload) });
    await queue.start({ work: true });

    await queue.send('test.woken', { n: 1 });

    expect(await seen).toEqual({ n: 1 });
  });

  it('retries a job that fails once, then it succeeds, and logs the failure with name and id', async () => {
    const attempts: number[] = [];
    const { logger, errors } = captureLogger();
    const queue = newQueue({ logger });
    queue.define({
      name: 'test.flaky',
      schema: z.object({ n: z.number() }),
      retryDelaySeconds: 1,
      retryBackoff: false,
      perform: async (_payload, { attempt }) => {
        attempts.push(attempt);
        if (attempt === 1) throw new Error('flaky upstream');
      },
    });
    await queue.start({ work: true });

    const id = await queue.send('test.flaky', { n: 1 });
    await queue.drain('test.flaky', 15_000);

    expect(attempts).toEqual([1, 2]);
    expect(errors).toEqual([{ o: expect.objectContaining({ job: 'test.flaky', jobId: id, attempt: 1 }), m: 'job failed' }]);
  });

  it('refuses at send a payload that does not match the schema, an unknown job, and a singletonKey on a standard queue', async () => {
    const queue = newQueue();
    queue.define({ name: 'test.strict', schema: z.object({ count: z.number().int() }), perform: async () => {} });
    await queue.start({ work: false });

    await expect(queue.send('test.strict', { count: 'three' })).rejects.toThrow(/Job 'test.strict': invalid payload \(count: /);
    await expect(queue.send('test.nowhere', {})).rejects.toThrow(/No job named 'test.nowhere'/);
    await expect(queue.send('test.strict', { count: 1 }, { singletonKey: 'k' })).rejects.toThrow(/policy/);
    await queue.drain('test.strict', 1_000); // nothing was stored
  });

  it('checks job names and payloads against the job map at compile time', () => {
    /** A map as families declare it (the service's is Jobs, declared beside each job). */
    interface DemoJobs {
      'demo.ingest': { fileId: string; generation: number };
      'demo.sweep': Record<string, never>;
    }
    const queue = createJobQueue<DemoJobs>(database);
    queue.define({
      name: 'demo.ingest',
      schema: z.object({ fileId: z.string(), generation: z.number() }),
      // The payload arrives with its declared type: no cast.
      perform: async ({ fileId, generation }) => void `${fileId.toUpperCase()}:${generation.toFixed(0)}`,
    });
    // Checked by the compiler only (never called): each line fails to compile without its comment.
    const refused = () => [
      // @ts-expect-error: a job nobody declared
      queue.send('demo.nowhere', {}),
      // @ts-expect-error: a payload of another shape than the job's
      queue.send('demo.ingest', { fileId: 'f1', generation: '2' }),
      // @ts-expect-error: a schema that does not describe the job's payload
      queue.define({ name: 'demo.sweep', schema: z.object({ n: z.number() }), perform: async () => {} }),
    ];
    expect(typeof refused).toBe('function');
  });

  it('validates again before perform, so a malformed stored job fails instead of running', async () => {
    const performed: unknown[] = [];
    const { logger, errors } = captureLogger();
    const queue = newQueue({ logger });
    queue.define({
      name: 'test.revalidate',
      schema: z.object({ userId: z.string() }),
      retryLimit: 0,
      perform: async (payload) => {
        performed.push(payload);
      },
    });
    await queue.start({ work: true });

    // Another writer (an older release, a hand-made row) put a payload this code does not accept.
    const id = await rawBoss(async (boss) => boss.send('test.revalidate', { userId: 42 }));
    await queue.drain('test.revalidate', 10_000);

    expect(performed).toEqual([]);
    expect(errors).toEqual([{ o: expect.objectContaining({ job: 'test.revalidate', jobId: id }), m: 'job failed' }]);
    expect(String((errors[0].o as { err: Error }).err.message)).toMatch(/invalid payload \(userId: /);
  });

  it('deduplicates by singletonKey in a short-policy queue', async () => {
    const queue = newQueue();
    queue.define({ name: 'test.short', policy: 'short', schema: z.object({ fileId: z.string() }), perform: async () => {} });
    await queue.start({ work: false }); // the API role: it sends, nobody works here

    const first = await queue.send('test.short', { fileId: 'a' }, { singletonKey: 'a' });
    const again = await queue.send('test.short', { fileId: 'a' }, { singletonKey: 'a' });
    const other = await queue.send('test.short', { fileId: 'b' }, { singletonKey: 'b' });

    expect(first).toEqual(expect.any(String));
    expect(again).toBeNull();
    expect(other).toEqual(expect.any(String));
  });

  it('runs up to `concurrency` jobs of a name at once, and starts a job defined after start', async () => {
    const queue = newQueue();
    await queue.start({ work: true });
    let active = 0;
    let most = 0;
    const bothRunning = deferred();
    queue.define({
      name: 'test.parallel',
      schema: z.object({ n: z.number() }),
      concurrency: 2,
      perform: async () => {
        active += 1;
        most = Math.max(most, active);
        if (active === 2) bothRunning.resolve();
        await Promise.race([bothRunning.promise, sleep(5_000)]);
        active -= 1;
      },
    });

    await queue.send('test.parallel', { n: 1 });
    await queue.send('test.parallel', { n: 2 });
    await queue.drain('test.parallel', 15_000);

    expect(most).toBe(2);
  });

  it('hands a job interrupted by stop() to the next queue started on the same database', async () => {
    const definition = { name: 'test.durable', schema: z.object({ n: z.number() }), retryDelaySeconds: 1, retryBackoff: false };
    const taken = deferred();
    let reason: unknown;
    const first = newQueue();
    first.define({
      ...definition,
      perform: async (_payload, { signal }) => {
        taken.resolve();
        await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject((reason = signal.reason))));
      },
    });
    await first.start({ work: true });
    const id = await first.send('test.durable', { n: 1 });
    await taken.promise;

    await first.stop({ timeoutMs: 300 });
    expect(String(reason)).toMatch(/stopping/);

    const resumed: unknown[] = [];
    const second = newQueue();
    second.define({ ...definition, perform: async (payload, { jobId, attempt }) => void resumed.push({ payload, jobId, attempt }) });
    await second.start({ work: true });
    await second.drain('test.durable', 15_000);

    expect(resumed).toEqual([{ payload: { n: 1 }, jobId: id, attempt: 2 }]);
  });

  it('expires a job whose worker died holding it, and runs it again', async () => {
    const definition = { name: 'test.orphan', schema: z.object({ n: z.number() }), expireInSeconds: 2, retryDelaySeconds: 0, retryBackoff: false };
    const api = newQueue();
    api.define({ ...definition, perform: async () => {} });
    await api.start({ work: false });
    const id = await api.send('test.orphan', { n: 2 });

    // A worker takes the job and dies: no completion, no failure, the row stays active.
    const fetched = await rawBoss(async (boss) => boss.fetch('test.orphan'));
    expect(fetched.map((job) => job.id)).toEqual([id]);

    const resumed: unknown[] = [];
    const worker = newQueue({ superviseIntervalSeconds: 1 });
    worker.define({ ...definition, perform: async (_payload, { jobId, attempt }) => void resumed.push({ jobId, attempt }) });
    await worker.start({ work: true });
    await worker.drain('test.orphan', 20_000);

    expect(resumed).toEqual([{ jobId: id, attempt: 2 }]);
  });

  it('sends the jobs of a cron schedule', async () => {
    const ticks = deferred<unknown>();
    const queue = newQueue({ superviseIntervalSeconds: 1 });
    queue.define({ name: 'test.cron', schema: z.object({ scope: z.string() }), perform: async (payload) => ticks.resolve(payload) });
    await queue.start({ work: true });

    await expect(queue.schedule('test.cron', '* * * * *', { scope: 1 })).rejects.toThrow(/invalid payload/);
    await queue.schedule('test.cron', '* * * * *', { scope: 'retention' });

    await expect(Promise.race([ticks.promise, sleep(20_000).then(() => 'no tick')])).resolves.toEqual({ scope: 'retention' });
  });

  it('starts queues that come up at once, as several processes would on a new database', async () => {
    // Separate handles on PostgreSQL, like separate processes; PGlite has only the one.
    const handles = adminUrl ? await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl, migrate: false, poolSize: 3 }))) : [database, database, database];
    try {
      const crowd = handles.map((handle) => {
        const queue = createJobQueue<AnyJobs>(handle, { pollingIntervalSeconds: 0.5 });
        for (const name of ['test.crowd.a', 'test.crowd.b', 'test.crowd.c', 'test.crowd.d']) {
          queue.define({ name, schema: z.object({}), perform: async () => {} });
        }
        return queue;
      });
      const results = await Promise.allSettled(crowd.map((queue, index) => queue.start({ work: index > 0 })));
      expect(results.map((result) => (result.status === 'rejected' ? String(result.reason) : 'started'))).toEqual(['started', 'started', 'started']);
      await crowd[0].send('test.crowd.d', {});
      await crowd[0].drain('test.crowd.d', 10_000);
      await Promise.all(crowd.map((queue) => queue.stop()));
    } finally {
      if (adminUrl) await Promise.all(handles.map((handle) => handle.close()));
    }
  });

  it('lets the process exit after stop() and close(): no timer, socket or worker is left behind', async () => {
    // Embedded, the child's database starts in a new folder as a deployment's first start makes it: a copy of the empty cluster.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-jobs-child-'));
    const child = await runChild(childScript(), { JOBS_CHILD_DATABASE_URL: databaseUrl ?? '', JOBS_CHILD_DATA_DIR: dataDir, JOBS_CHILD_EMPTY_CLUSTER: emptyClusterPath() }, 50_000).finally(() =>
      rmSync(dataDir, { recursive: true, force: true }),
    );
    expect(child.stderr).not.toMatch(/Error/);
    expect(child.stdout).toContain('performed {"n":7}');
    expect(child.stdout).toContain('perform saw abort: job queue is stopping');
    expect(child.stdout).toContain('logged failure: job queue is stopping');
    expect(child.code).toBe(0);
  }, 60_000);
});

function newQueue(options: JobQueueOptions = {}): JobQueue<AnyJobs> {
  const queue = createJobQueue<AnyJobs>(database, { pollingIntervalSeconds: 0.5, ...options });
  queues.push(queue);
  return queue;
}

/** A bare pg-boss on the same tables, to act as another writer or as a worker that dies. */
async function rawBoss<T>(use: (boss: PgBoss) => Promise<T>): Promise<T> {
  const boss = new PgBoss({ db: { executeSql: (text, values) => database.executeSql(text, values) }, schema: 'pgboss', supervise: false, schedule: false });
  await boss.start();
  try {
    return await use(boss);
  } finally {
    await boss.stop({ graceful: false, close: false }); // fails only jobs of its workers, and it has none
  }
}

function captureLogger(): { logger: JobLogger; errors: Array<{ o: object; m?: string }> } {
  const errors: Array<{ o: object; m?: string }> = [];
  return { errors, logger: { info() {}, error: (o, m) => void errors.push({ o, m }) } };
}

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** A round trip and a stop that interrupts a job, in a fresh process, which must then end by itself (no process.exit). */
function childScript(): string {
  const client = pathToFileURL(fileURLToPath(new URL('../db/client.ts', import.meta.url))).href;
  const queue = pathToFileURL(fileURLToPath(new URL('./queue.ts', import.meta.url))).href;
  return `
    const { openDatabase } = await import(${JSON.stringify(client)});
    const { createJobQueue } = await import(${JSON.stringify(queue)});
    const { z } = await import('zod');
    const url = process.env.JOBS_CHILD_DATABASE_URL;
    const database = url
      ? await openDatabase({ databaseUrl: url, migrate: false })
      : await openDatabase({ dataDir: process.env.JOBS_CHILD_DATA_DIR, emptyCluster: process.env.JOBS_CHILD_EMPTY_CLUSTER, migrate: false });
    const logger = { info() {}, error: (o) => console.log('logged failure: ' + o.err.message) };
    const queue = createJobQueue(database, { pollingIntervalSeconds: 0.5, logger });
    queue.define({ name: 'test.child', schema: z.object({ n: z.number() }), perform: async (payload) => console.log('performed', JSON.stringify(payload)) });
    let hanging;
    const taken = new Promise((resolve) => (hanging = resolve));
    queue.define({
      name: 'test.child.hang',
      schema: z.object({}),
      perform: (_payload, { signal }) => new Promise((_resolve, reject) => {
        hanging();
        signal.addEventListener('abort', () => {
          console.log('perform saw abort: ' + signal.reason.message);
          reject(signal.reason);
        });
      }),
    });
    await queue.start({ work: true });
    await queue.send('test.child', { n: 7 });
    await queue.drain('test.child', 20000);
    await queue.send('test.child.hang', {});
    await taken;
    await queue.stop({ timeoutMs: 200 });
    await database.close();
  `;
}

function runChild(script: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child process did not exit within ${timeoutMs} ms (something kept it alive)\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function createDatabase(url: string): Promise<string> {
  const name = `jobs_${randomBytes(6).toString('hex')}`;
  await withClient(url, (client) => client.query(`CREATE DATABASE ${name}`));
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}

async function dropDatabase(url: string, target: string): Promise<void> {
  const name = new URL(target).pathname.slice(1);
  await withClient(url, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
