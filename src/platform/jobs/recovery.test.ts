// Taking back the jobs of a gone process, against the real database (PGlite, or a fresh PostgreSQL
// database when TEST_DATABASE_URL is set). A "dead worker" is a bare pg-boss that fetched the job and
// never ended it, with an attempt row under a process whose heartbeat stopped: what a SIGKILL leaves.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestDatabase } from '../../../test/support/database.js';
import { openDatabase, type DatabaseHandle } from '../db/client.js';
import { newId } from '../ids/ids.js';
import { createProcessLiveness, type ProcessLiveness } from '../processes/liveness.js';
import { createJobQueue, type JobDefinition, type JobQueue } from './queue.js';
import { ABANDONED_MESSAGE } from './recovery.js';

const adminUrl = process.env.TEST_DATABASE_URL;
let database: DatabaseHandle;
let databaseUrl: string | undefined;
/** Any job name, any payload: these tests are about the queue, not the service's jobs. */
type AnyJobs = Record<string, any>;
const queues: JobQueue<AnyJobs>[] = [];
const livenesses: ProcessLiveness[] = [];

beforeAll(async () => {
  if (adminUrl) {
    databaseUrl = `${adminUrl.replace(/\/[^/]*$/, '')}/recovery_${randomBytes(6).toString('hex')}`;
    await withAdmin((client) => client.query(`CREATE DATABASE ${new URL(databaseUrl!).pathname.slice(1)}`));
    database = await openDatabase({ databaseUrl });
  } else {
    // The run's migrated template, lent to this file (a new one in memory ran initdb and every migration).
    database = await openTestDatabase();
  }
});

afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop({ graceful: false })));
  await Promise.all(livenesses.splice(0).map((liveness) => liveness.stop()));
});

afterAll(async () => {
  await database?.close();
  if (adminUrl && databaseUrl) await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${new URL(databaseUrl!).pathname.slice(1)} WITH (FORCE)`));
});

describe(`recovery of a gone process's jobs on ${adminUrl ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('retries at once, on another process, a job whose process stopped beating; its retry delay is not waited', async () => {
    const name = uniqueName('resume');
    const seen: Array<{ attempt: number; at: number }> = [];
    const definition: JobDefinition<{ n: number }> = {
      name,
      schema: z.object({ n: z.number() }),
      retryDelaySeconds: 600,
      perform: async (_payload, { attempt }) => void seen.push({ attempt, at: Date.now() }),
    };
    const id = await sendFromApi(definition, { n: 1 });
    await dieHolding(name, id, { secondsSinceHeard: 30 });

    const began = Date.now();
    const worker = newQueue(definition, await newLiveness(2));
    await worker.start({ work: true });
    await worker.drain(name, 10_000);

    expect(seen.map((run) => run.attempt)).toEqual([2]);
    expect(seen[0].at - began).toBeLessThan(3_000);
    expect(await attemptRows(id)).toEqual([]);
    expect(await jobState(id)).toBe('completed');
  });

  it('takes back a job whose process stops beating while the other runs, within timeout + a beat', async () => {
    const name = uniqueName('later');
    const seen: number[] = [];
    const definition: JobDefinition<{ n: number }> = { name, schema: z.object({ n: z.number() }), perform: async (_p, { attempt }) => void seen.push(attempt) };
    const worker = newQueue(definition, await newLiveness(1));
    await worker.start({ work: true });
    const id = await sendFromApi(definition, { n: 2 });
    // The job was fetched by a process heard from just now, which then dies.
    const dying = await dieHolding(name, id, { secondsSinceHeard: 0 });
    const diedAt = Date.now();

    await waitFor(async () => (await jobState(id)) === 'completed', 10_000);

    expect(seen).toEqual([2]);
    expect(Date.now() - diedAt).toBeLessThan(1_000 + 1_000 + 1_500);
    expect(dying).toBeTruthy();
  });

  it('takes back an active job that has no attempt row once it started longer than the timeout ago (died between fetch and row)', async () => {
    const name = uniqueName('rowless');
    const seen: number[] = [];
    const definition: JobDefinition<{ n: number }> = { name, schema: z.object({ n: z.number() }), perform: async (_p, { attempt }) => void seen.push(attempt) };
    const id = await sendFromApi(definition, { n: 3 });
    await rawBoss((boss) => boss.fetch(name));

    const worker = newQueue(definition, await newLiveness(1));
    await worker.start({ work: true });
    await waitFor(async () => (await jobState(id)) === 'completed', 10_000);

    expect(seen).toEqual([2]);
  });

  it('fails for good a job abandoned in its last attempt, and tells its kind, which cleans up', async () => {
    const name = uniqueName('last');
    const told: unknown[] = [];
    const definition: JobDefinition<{ fileId: string }> = {
      name,
      schema: z.object({ fileId: z.string() }),
      retryLimit: 0,
      perform: async () => {
        throw new Error('never run again');
      },
      abandoned: async (payload, context) => void told.push({ payload, context }),
    };
    const id = await sendFromApi(definition, { fileId: 'f-1' });
    await dieHolding(name, id, { secondsSinceHeard: 30 });

    const worker = newQueue(definition, await newLiveness(2));
    await worker.start({ work: true });

    expect(await jobState(id)).toBe('failed');
    expect(await jobOutput(id)).toEqual({ message: ABANDONED_MESSAGE });
    expect(told).toEqual([{ payload: { fileId: 'f-1' }, context: { jobId: id, attempt: 1 } }]);
  });

  it('on an exclusive database (the embedded shape) takes back at start a job of a process heard from a moment ago', async () => {
    const name = uniqueName('exclusive');
    const seen: number[] = [];
    const definition: JobDefinition<{ n: number }> = { name, schema: z.object({ n: z.number() }), perform: async (_p, { attempt }) => void seen.push(attempt) };
    const id = await sendFromApi(definition, { n: 4 });
    await dieHolding(name, id, { secondsSinceHeard: 0 });

    const restarted = createProcessLiveness(database, { role: 'all', timeoutSeconds: 60, exclusive: true });
    await restarted.start();
    livenesses.push(restarted);
    const worker = newQueue(definition, restarted);
    await worker.start({ work: true });
    await worker.drain(name, 5_000);

    expect(seen).toEqual([2]);
  });

  it('on an exclusive database takes a job back again when the restarted process dies in it too', async () => {
    const name = uniqueName('twice');
    const seen: string[] = [];
    const start = async (label: string, perform: JobDefinition<{ n: number }>['perform']) => {
      const liveness = createProcessLiveness(database, { role: 'all', timeoutSeconds: 60, exclusive: true });
      await liveness.start();
      livenesses.push(liveness);
      const queue = newQueue({ name, schema: z.object({ n: z.number() }), concurrency: 1, perform }, liveness);
      await queue.start({ work: true });
      return { label, queue };
    };
    const id = await sendFromApi({ name, schema: z.object({ n: z.number() }), perform: async () => {} }, { n: 6 });
    await dieHolding(name, id, { secondsSinceHeard: 0 });

    // The first restart takes the job back and dies in the retry (its perform never ends: no cleanup of any kind).
    await start('first restart', async (_p, { attempt }) => {
      seen.push(`first restart: attempt ${attempt}`);
      await new Promise(() => {});
    });
    await waitFor(async () => seen.length === 1, 5_000);
    // The second restart takes it back once more and finishes it.
    const second = await start('second restart', async (_p, { attempt }) => void seen.push(`second restart: attempt ${attempt}`));
    await second.queue.drain(name, 5_000);

    expect(seen).toEqual(['first restart: attempt 2', 'second restart: attempt 3']);
    expect(await jobState(id)).toBe('completed');
  });

  it('leaves alone the job of a process that is still heard from, however long it runs', async () => {
    const name = uniqueName('alive');
    const attempts: number[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const definition: JobDefinition<{ n: number }> = {
      name,
      schema: z.object({ n: z.number() }),
      perform: async (_p, { attempt }) => {
        attempts.push(attempt);
        await released;
      },
    };
    const busy = newQueue(definition, await newLiveness(1));
    await busy.start({ work: true });
    const watcher = newQueue({ ...definition, perform: async (_p, { attempt }) => void attempts.push(attempt) }, await newLiveness(1));
    await watcher.start({ work: true });
    const id = await busy.send(name, { n: 5 });
    await waitFor(async () => attempts.length === 1, 5_000);

    await sleep(3_500); // several timeouts and beats of both processes
    expect(await jobState(id!)).toBe('active');
    release();
    await busy.drain(name, 5_000);

    expect(attempts).toEqual([1]);
  });
});

describe('which processes are gone', () => {
  it('answers the ids not heard from within the timeout, never its own', async () => {
    const asker = await newLiveness(1);
    const live = await newLiveness(1);
    const stopped = await newLiveness(1);
    await stopped.stop();
    const unknown = newId();
    expect([...(await asker.goneOf([asker.id, live.id, stopped.id, unknown]))].sort()).toEqual([stopped.id, unknown].sort());
    // A process killed (its row left, no beat since) counts as gone once the timeout has passed.
    const killed = newId();
    await database.executeSql(`insert into service_processes (id, role, seen_at) values ($1, 'worker', now() - interval '2 seconds')`, [killed]);
    expect([...(await asker.goneOf([live.id, killed]))]).toEqual([killed]);
  });
});

describe('when a process beats', () => {
  const tasksRun = async (exclusive: boolean): Promise<number> => {
    // A beat every 200 ms (a third of the timeout).
    const liveness = createProcessLiveness(database, { role: 'all', timeoutSeconds: 0.6, exclusive });
    await liveness.start();
    livenesses.push(liveness);
    let runs = 0;
    liveness.onBeat(async () => void runs++);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return runs;
  };

  it('beats on while it runs when other processes may share the database', async () => {
    expect(await tasksRun(false)).toBeGreaterThanOrEqual(3);
  });

  it('on an exclusive database beats once, a beat after start (for tasks registered after it), then rests', async () => {
    expect(await tasksRun(true)).toBe(1);
  });
});

function uniqueName(label: string): string {
  return `test.recovery.${label}.${randomBytes(3).toString('hex')}`;
}

async function newLiveness(timeoutSeconds: number): Promise<ProcessLiveness> {
  const liveness = createProcessLiveness(database, { role: 'worker', timeoutSeconds });
  await liveness.start();
  livenesses.push(liveness);
  return liveness;
}

function newQueue<P>(definition: JobDefinition<P>, liveness: ProcessLiveness): JobQueue<AnyJobs> {
  const queue = createJobQueue<AnyJobs>(database, { pollingIntervalSeconds: 0.5, liveness });
  queue.define(definition);
  queues.push(queue);
  return queue;
}

/** Sends from an API-role queue (it defines the queue's row, sends, and works nothing). */
async function sendFromApi<P>(definition: JobDefinition<P>, payload: P): Promise<string> {
  const api = createJobQueue<AnyJobs>(database, { pollingIntervalSeconds: 0.5 });
  api.define(definition);
  await api.start({ work: false });
  try {
    return (await api.send(definition.name, payload))!;
  } finally {
    await api.stop();
  }
}

/** A process fetches the job, writes its attempt row, is last heard `secondsSinceHeard` ago, and is killed. */
async function dieHolding(name: string, jobId: string, { secondsSinceHeard }: { secondsSinceHeard: number }): Promise<string> {
  const processId = newId();
  const fetched = await rawBoss((boss) => boss.fetch(name));
  expect(fetched.map((job) => job.id)).toEqual([jobId]);
  await database.executeSql(`insert into service_processes (id, role, seen_at) values ($1, 'worker', now() - $2 * interval '1 second')`, [processId, secondsSinceHeard]);
  await database.executeSql(`insert into job_attempts (job_id, job_name, process_id) values ($1, $2, $3)`, [jobId, name, processId]);
  return processId;
}

async function jobState(id: string): Promise<string | undefined> {
  const { rows } = await database.executeSql(`select state::text as state from pgboss.job where id = $1`, [id]);
  return rows[0]?.state;
}

async function jobOutput(id: string): Promise<unknown> {
  const { rows } = await database.executeSql(`select output from pgboss.job where id = $1`, [id]);
  return rows[0]?.output;
}

async function attemptRows(id: string): Promise<unknown[]> {
  const { rows } = await database.executeSql(`select job_id, process_id from job_attempts where job_id = $1`, [id]);
  return rows;
}

async function rawBoss<T>(use: (boss: PgBoss) => Promise<T>): Promise<T> {
  const boss = new PgBoss({ db: { executeSql: (text, values) => database.executeSql(text, values) }, schema: 'pgboss', supervise: false, schedule: false });
  await boss.start();
  try {
    return await use(boss);
  } finally {
    await boss.stop({ graceful: false, close: false });
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(100);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function withAdmin<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
