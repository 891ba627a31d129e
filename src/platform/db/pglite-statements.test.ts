// The PGlite client that keeps a statement sent twice as a named statement: the same results, types and
// errors as PGlite's own query, the connection usable after an error, and only long parameterised
// statements kept.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { emptyClusterPath, seedFromEmptyCluster } from './empty-cluster.js';
import { withKeptStatements, type KeptClient } from './pglite-statements.js';

// A data folder copied from the empty cluster, as a deployment's first start makes one: PGlite's initdb
// (in memory) took seconds of CPU.
const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'dt-kept-')), 'pglite');
let raw: PGlite;
let kept: KeptClient;
const pad = `/* ${'x'.repeat(200)} */`; // long enough to be kept

// The embedded database's own tests: the server pass (TEST_DATABASE_URL) would run the same PGlite code again.
const SERVER_PASS = Boolean(process.env.TEST_DATABASE_URL);

beforeAll(async () => {
  if (SERVER_PASS) return;
  if (!seedFromEmptyCluster(dataDir, emptyClusterPath())) throw new Error('the empty cluster is missing: the test run makes it first');
  raw = new PGlite(dataDir);
  await raw.waitReady;
  kept = withKeptStatements(raw);
  await raw.exec(`create table things (id int primary key, at timestamptz not null, doc jsonb, amount numeric(18, 6), tags text[], note text)`);
});
afterAll(async () => {
  await raw?.close();
  rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

const keptNames = async () => (await raw.query<{ name: string }>(`select name from pg_prepared_statements where name like 'dt_kept_%' order by name`)).rows.map((r) => r.name);

describe.skipIf(SERVER_PASS)('withKeptStatements', () => {
  it('keeps a long parameterised statement from its second use, with the same results and types', async () => {
    const insert = `${pad} insert into things (id, at, doc, amount, tags, note) values ($1, $2, $3, $4, $5, $6) returning *`;
    const at = new Date('2030-01-02T03:04:05.678Z');
    const first = await kept.query(insert, [1, at, { a: [1, 'b'] }, 1.25, ['x', "y'z"], null]);
    expect(await keptNames()).toEqual([]);
    const second = await kept.query(insert, [2, at, { a: [1, 'b'] }, 1.25, ['x', "y'z"], null]);
    expect(await keptNames()).toHaveLength(1);
    const third = await kept.query(insert, [3, at, { a: [1, 'b'] }, 1.25, ['x', "y'z"], 'note']);
    const strip = (rows: Array<Record<string, unknown>>) => rows.map(({ id: _id, note: _note, ...rest }) => rest);
    expect(strip(second.rows as Array<Record<string, unknown>>)).toEqual(strip(first.rows as Array<Record<string, unknown>>));
    expect(third.rows[0]).toMatchObject({ id: 3, at, doc: { a: [1, 'b'] }, amount: '1.250000', tags: ['x', "y'z"], note: 'note' });
    expect(third.fields.map((field) => field.name)).toEqual(['id', 'at', 'doc', 'amount', 'tags', 'note']);
    expect(third.affectedRows).toBe(1);
    expect(await keptNames()).toHaveLength(1);
  });

  it('binds awkward values to a kept statement exactly as PGlite binds them', async () => {
    // Many parameters, SQL NULL, empty text, multibyte text (accents, an emoji, CJK), a long text.
    const values = ['', null, 'crème brûlée', 'a 🦊 said 你好', 'x'.repeat(70_000), "quote ' and \\ backslash", '\n\ttabs', ...Array.from({ length: 33 }, (_, i) => `v${i}`)];
    const select = `${pad} select ${values.map((_, i) => `$${i + 1}::text as c${i}`).join(', ')}`;
    const plain = await raw.query(select, values, { rowMode: 'array' });
    for (let i = 0; i < 3; i++) {
      const answer = await kept.query(select, values, { rowMode: 'array' });
      expect(answer.rows).toEqual(plain.rows);
    }
    expect(plain.rows[0]).toEqual(values);
  });

  it('answers a kept statement as PGlite does in array row mode', async () => {
    const select = `${pad} select id, note from things where id = $1`;
    await kept.query(select, [3], { rowMode: 'array' });
    const again = await kept.query(select, [3], { rowMode: 'array' });
    expect(again.rows).toEqual([[3, 'note']]);
  });

  it("applies a query's own parsers to a kept statement, over PGlite's, and only to that query", async () => {
    const select = `${pad} select id, at, amount from things where id = $1`;
    const asText = { 1184: (value: string) => value };
    const before = (await keptNames()).length;
    for (let i = 0; i < 3; i++) {
      const own = await kept.query<{ at: unknown }>(select, [3], { parsers: asText });
      expect(typeof own.rows[0]!.at).toBe('string');
      expect(new Date(own.rows[0]!.at as string).toISOString()).toBe('2030-01-02T03:04:05.678Z');
      const plain = await kept.query<{ at: unknown }>(select, [3]);
      expect(plain.rows[0]!.at).toEqual(new Date('2030-01-02T03:04:05.678Z'));
    }
    expect(await keptNames()).toHaveLength(before + 1); // kept from its second use on
    // Another query's parsers are its own: nothing of the first leaks into it.
    const upper = await kept.query<{ note: unknown }>(`${pad} select note from things where id = $1`, [3], { parsers: { 25: (value: string) => value.toUpperCase() } });
    expect(upper.rows[0]!.note).toBe('NOTE');
    const again = await kept.query<{ note: unknown }>(`${pad} select note from things where id = $1`, [3], { parsers: { 25: (value: string) => value.toUpperCase() } });
    expect(again.rows[0]!.note).toBe('NOTE');
    expect((await kept.query<{ at: unknown }>(select, [3], { parsers: asText })).rows[0]!.at).toEqual(expect.any(String));
  });

  it("answers a kept statement's error with its SQLSTATE, and the connection goes on", async () => {
    const insert = `${pad} insert into things (id, at) values ($1, now())`;
    await kept.query(insert, [10]);
    await kept.query(insert, [11]);
    await expect(kept.query(insert, [11])).rejects.toMatchObject({ code: '23505' });
    expect((await kept.query(insert, [12])).affectedRows).toBe(1);
    expect((await raw.query('select count(*)::int as n from things where id >= 10')).rows).toEqual([{ n: 3 }]);
  });

  it('runs short or parameterless statements as they come, and a statement it cannot name as PGlite would', async () => {
    const before = (await keptNames()).length;
    await kept.query('select $1::int as n', [1]);
    await kept.query('select $1::int as n', [1]);
    await kept.query(`${pad} select 1 as n`);
    await kept.query(`${pad} select 1 as n`);
    expect(await keptNames()).toHaveLength(before);
    const broken = `${pad} select * from no_such_table where id = $1`;
    await expect(kept.query(broken, [1])).rejects.toMatchObject({ code: '42P01' });
    await expect(kept.query(broken, [1])).rejects.toMatchObject({ code: '42P01' });
    await expect(kept.query(broken, [1])).rejects.toMatchObject({ code: '42P01' });
    expect((await kept.query(`${pad} select id from things where id = $1`, [1])).rows).toEqual([{ id: 1 }]);
  });

  it('waits for a transaction in progress, as PGlite does', async () => {
    const select = `${pad} select count(*)::int as n from things where id > $1`;
    await kept.query(select, [0]);
    let inside = false;
    const transaction = raw.transaction(async (tx) => {
      inside = true;
      await tx.query('insert into things (id, at) values (100, now())');
      await new Promise((resolve) => setTimeout(resolve, 50));
      inside = false;
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const during = kept.query(select, [99]);
    await transaction;
    expect(inside).toBe(false);
    expect((await during).rows).toEqual([{ n: 1 }]);
  });
});

describe.skipIf(SERVER_PASS)('queryGroup', () => {
  const insert = `${pad} insert into things (id, at, note) values ($1, now(), $2) returning id, note, pg_current_xact_id()::text as xact`;
  const select = `${pad} select id, at, amount from things where id = $1`;
  beforeAll(async () => {
    await kept.query(insert, [200, 'a']);
    await kept.query(insert, [201, 'b']);
    await kept.query(select, [200]);
    await kept.query(select, [200]);
  });

  it("answers each statement of a group as it would answer alone, with each one's own row mode and parsers, in one transaction", async () => {
    const answers = await kept.queryGroup([
      { text: insert, params: [210, 'ten'] },
      { text: select, params: [210], options: { rowMode: 'array' } },
      { text: insert, params: [211, 'eleven'] },
      { text: select, params: [211], options: { parsers: { 1184: (value: string) => value } } },
    ]);
    expect(answers.map((answer) => answer.ok)).toEqual([true, true, true, true]);
    const [first, second, third, fourth] = answers.map((answer) => (answer.ok ? answer.result : undefined));
    expect(first!.rows).toEqual([{ id: 210, note: 'ten', xact: expect.any(String) }]);
    expect(first!.affectedRows).toBe(1);
    expect(second!.rows).toEqual([[210, expect.any(Date), null]]); // sees the insert before it
    expect(typeof (fourth!.rows[0] as { at: unknown }).at).toBe('string');
    // One commit for all: the two inserts share a transaction.
    expect((third!.rows[0] as { xact: string }).xact).toBe((first!.rows[0] as { xact: string }).xact);
  });

  it("answers a failing statement's error and every other statement's result, each applied once", async () => {
    const answers = await kept.queryGroup([
      { text: insert, params: [220, 'first'] },
      { text: insert, params: [220, 'duplicate'] },
      { text: insert, params: [221, 'after'] },
    ]);
    expect(answers[0]).toMatchObject({ ok: true });
    expect(answers[1]).toMatchObject({ ok: false, error: { code: '23505' } });
    expect(answers[2]).toMatchObject({ ok: true });
    const rows = await raw.query<{ id: number; note: string }>('select id, note from things where id in (220, 221) order by id');
    expect(rows.rows).toEqual([
      { id: 220, note: 'first' },
      { id: 221, note: 'after' },
    ]);
  });

  it('runs statements not yet kept one by one, as query does', async () => {
    const fresh = `${pad} select $1::int + 1 as n /* not kept yet */`;
    const answers = await kept.queryGroup([
      { text: fresh, params: [1] },
      { text: fresh, params: [2] },
    ]);
    expect(answers.map((answer) => (answer.ok ? answer.result.rows : answer.error))).toEqual([[{ n: 2 }], [{ n: 3 }]]);
  });
});
