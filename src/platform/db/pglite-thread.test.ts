// The embedded database's thread on its own: statements, transactions (committed, rolled back, and
// keeping other statements out while open), errors with their SQLSTATE, notices before the answer of
// the statement that sent them, a data folder that outlives the thread, and a thread that dies.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGLITE_WORKER } from '../../../test/support/database.js';
import { emptyClusterPath } from './empty-cluster.js';
import { isUniqueViolation } from './errors.js';
import { openPgliteThread, type PgliteThread, type ThreadInit } from './pglite-thread.js';

/**
 * The file's first thread runs in memory from the TypeScript sources (`npm run dev`'s way). The others
 * start, as a deployment's first start does, on a new data folder copied from the empty cluster, with the
 * compiled worker: PGlite's initdb in each new thread took seconds of CPU.
 */
const newFolder = () => mkdtempSync(path.join(os.tmpdir(), 'dt-thread-'));
function openOnFolder(dataDir: string, init: Omit<ThreadInit, 'dataDir' | 'emptyCluster'> = {}, onLost?: (error: Error) => void) {
  return openPgliteThread({ ...init, dataDir, emptyCluster: emptyClusterPath() }, onLost, PGLITE_WORKER);
}

// The embedded database's own tests: the server pass (TEST_DATABASE_URL) would run the same PGlite code again.
const SERVER_PASS = Boolean(process.env.TEST_DATABASE_URL);

describe.skipIf(SERVER_PASS)('the embedded database thread', () => {
  let db: PgliteThread;
  beforeAll(async () => {
    db = await openPgliteThread();
    await db.exec('create table items (id int primary key, name text not null, at timestamptz not null default now())');
  });
  afterAll(() => db.close());

  it('runs statements with parameters and answers rows as objects or arrays', async () => {
    await db.query('insert into items (id, name) values ($1, $2)', [1, 'one']);
    expect((await db.query<{ id: number; name: string }>('select id, name from items where id = $1', [1])).rows).toEqual([{ id: 1, name: 'one' }]);
    expect((await db.query('select id, name from items where id = $1', [1], { rowMode: 'array' })).rows).toEqual([[1, 'one']]);
  });

  it("leaves types as text when the caller's parsers say so (drizzle's), and refuses parsers it cannot carry", async () => {
    const identity = { 1184: (value: string) => value };
    const [row] = (await db.query<{ at: unknown }>('select at from items where id = 1', [], { parsers: identity })).rows;
    expect(typeof row.at).toBe('string');
    const [parsed] = (await db.query<{ at: unknown }>('select at from items where id = 1')).rows;
    expect(parsed.at).toBeInstanceOf(Date);
    await expect(db.query('select 1', [], { parsers: { 1184: (value: string) => new Date(value) } })).rejects.toThrow(/cannot run in the database thread/);
  });

  it('answers a database error with its SQLSTATE and constraint, and goes on', async () => {
    const error = await db.query('insert into items (id, name) values (1, $1)', ['again']).catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
    expect(error).toMatchObject({ code: '23505', constraint: 'items_pkey' });
    expect((await db.query('select count(*)::int as n from items')).rows).toEqual([{ n: 1 }]);
  });

  it('commits a transaction, rolls one back when its work throws, and keeps other statements out while one is open', async () => {
    await db.transaction(async (tx) => {
      await tx.query('insert into items (id, name) values (2, $1)', ['two']);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into items (id, name) values (3, $1)', ['three']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await db.query<{ id: number }>('select id from items order by id')).rows.map((row) => row.id)).toEqual([1, 2]);

    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const open = db.transaction(async (tx) => {
      await tx.query('update items set name = $1 where id = 2', ['inside']);
      order.push('inside wrote');
      await held;
      order.push('inside done');
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const outside = db.query<{ name: string }>('select name from items where id = 2').then((result) => {
      order.push(`outside read ${result.rows[0].name}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await Promise.all([open, outside]);
    expect(order).toEqual(['inside wrote', 'inside done', 'outside read inside']);
  });

  it('a failed statement inside a transaction fails the transaction and leaves nothing of it', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into items (id, name) values (4, $1)', ['four']);
        await tx.query('insert into items (id, name) values (1, $1)', ['duplicate']);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect((await db.query('select count(*)::int as n from items where id = 4')).rows).toEqual([{ n: 0 }]);
  });

  it('hears a notice before the answer of the statement that sent it, and stops hearing after unlisten', async () => {
    const heard: string[] = [];
    const unlisten = await db.listen('changes', (payload) => heard.push(payload));
    await db.query(`select pg_notify('changes', 'first')`);
    expect(heard).toEqual(['first']);
    await unlisten();
    await db.query(`select pg_notify('changes', 'second')`);
    expect(heard).toEqual(['first']);
  });

  it('commits kept statements that arrive together as groups, each answering its own result or error', async () => {
    await db.exec('create table turns (id int primary key, note text not null, xact text not null)');
    const insert = `/* ${'a turn opening, long enough to be kept '.repeat(6)} */ insert into turns (id, note, xact) values ($1, $2, pg_current_xact_id()::text) returning id`;
    await db.query(insert, [0, 'first']);
    await db.query(insert, [1, 'second']); // kept from here on
    const ids = Array.from({ length: 60 }, (_, index) => index + 2);
    const outcomes = await Promise.allSettled([...ids, 30].map((id) => db.query<{ id: number }>(insert, [id, `turn ${id}`])));
    expect(outcomes.slice(0, -1).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.rows[0]!.id : outcome.reason))).toEqual(ids);
    expect(outcomes.at(-1)).toMatchObject({ status: 'rejected', reason: { code: '23505', constraint: 'turns_pkey' } });
    const stored = await db.query<{ n: number; commits: number }>('select count(*)::int as n, count(distinct xact)::int as commits from turns');
    expect(stored.rows[0]!.n).toBe(62);
    // 60 statements sent at once are not 60 commits.
    expect(stored.rows[0]!.commits).toBeLessThan(30);
  });

  it('runs several statements in one exec', async () => {
    const results = await db.exec(`insert into items (id, name) values (10, 'ten'); select name from items where id = 10`);
    expect(results.at(-1)?.rows).toEqual([{ name: 'ten' }]);
  });
});

describe.skipIf(SERVER_PASS)('data outside the thread', () => {
  it('keeps a data folder across threads, and starts another from a dump', async () => {
    const dir = newFolder();
    try {
      const first = await openOnFolder(dir);
      await first.exec(`create table kept (v text); insert into kept values ('still here')`);
      const dump = await first.dumpDataDir();
      await first.close();
      const second = await openOnFolder(dir);
      expect((await second.query('select v from kept')).rows).toEqual([{ v: 'still here' }]);
      await second.close();
      const copy = await openPgliteThread({ template: dump }, undefined, PGLITE_WORKER);
      expect((await copy.query('select v from kept')).rows).toEqual([{ v: 'still here' }]);
      await copy.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps a group's commit durable when one of its statements chose not to wait for the WAL for itself", async () => {
    const dir = newFolder();
    const pad = `/* ${'long enough to be kept '.repeat(10)} */`;
    const quick = `${pad} with quick as (select set_config('synchronous_commit', 'off', true)) insert into paid (id, what) select $1, $2 from quick returning pg_current_xact_id()::text as xact`;
    const charge = `${pad} insert into paid (id, what) values ($1, $2) returning pg_current_xact_id()::text as xact`;
    try {
      // Answers: the start's probe, the table, two of each statement (kept from the second), the busy
      // statement, then the group.
      const dying = await openOnFolder(dir, { stopAfter: 9 });
      await dying.exec('create table paid (id int primary key, what text not null)');
      for (const id of [1, 2]) await dying.query(quick, [id, 'an opening']);
      for (const id of [3, 4]) await dying.query(charge, [id, 'a charge']);
      // The thread is busy when the two arrive, so both wait together, as under load (idle, the thread may
      // wake for the first before the second is posted, and each then commits alone).
      const busy = dying.query('select count(*) from generate_series(1, 1000000)');
      const [opening, charged] = await Promise.all([dying.query<{ xact: string }>(quick, [5, 'an opening']), dying.query<{ xact: string }>(charge, [6, 'a charge'])]);
      await busy;
      expect(charged.rows[0]!.xact).toBe(opening.rows[0]!.xact); // one group, one transaction
      await expect(dying.query('select 1')).rejects.toThrow(/database thread stopped/);
      await dying.close();
      // The thread ended without closing PGlite: only what reached the WAL on disk is there.
      const after = await openOnFolder(dir);
      expect((await after.query<{ id: number }>('select id from paid order by id')).rows.map((row) => row.id)).toEqual([1, 2, 3, 4, 5, 6]);
      await after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers every waiting statement with an error when the thread is gone, and every later one too', async () => {
    const dir = newFolder();
    try {
      const doomed = await openOnFolder(dir);
      await doomed.close();
      await expect(doomed.query('select 1')).rejects.toThrow(/database thread stopped/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells its owner once when the thread stops on its own, not when it is closed', async () => {
    const lost: Error[] = [];
    const [dyingDir, closedDir] = [newFolder(), newFolder()];
    try {
      // The crash harness's stop: the thread ends after its third answer (the first is the start's probe).
      const dying = await openOnFolder(dyingDir, { stopAfter: 3 }, (error) => lost.push(error));
      await dying.query('select 1');
      await dying.query('select 2');
      await expect(dying.query('select 3')).rejects.toThrow(/database thread stopped \(exit code 70\)/);
      expect(lost.map((error) => error.message)).toEqual(['the database thread stopped (exit code 70)']);
      await expect(dying.query('select 4')).rejects.toThrow(/database thread stopped/);
      expect(lost).toHaveLength(1);
      await dying.close();

      const closedByOwner = await openOnFolder(closedDir, {}, (error) => lost.push(error));
      await closedByOwner.query('select 1');
      await closedByOwner.close();
      expect(lost).toHaveLength(1);
    } finally {
      for (const dir of [dyingDir, closedDir]) rmSync(dir, { recursive: true, force: true });
    }
  });
});
