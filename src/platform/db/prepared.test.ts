// A shaped statement run by hand (runShaped) stores and answers what drizzle's own statement would: each
// input through its column's encoding (JSON, timestamps), inputs read from the caller's objects by group,
// literal values kept, the result's columns named in order; inside a transaction it is drizzle's statement
// built with the values; a statement's failure reaches the caller with its SQLSTATE.
import { eq, sql } from 'drizzle-orm';
import { jsonb, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import type { Executor } from './client.js';
import { sqlStateOf } from './errors.js';
import { runShaped, type ShapedInputs } from './prepared.js';

const notes = pgTable('shaped_notes', {
  id: text('id').primaryKey(),
  body: text('body').notNull(),
  tags: jsonb('tags').$type<string[]>().notNull(),
  kind: text('kind').notNull(),
  amount: numeric('amount', { mode: 'number' }).notNull(),
  at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull(),
});

let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase();
  await database.executeSql(
    `create table shaped_notes (id text primary key, body text not null, tags jsonb not null, kind text not null, amount numeric not null, at timestamptz not null)`,
  );
});
afterAll(async () => {
  await database?.close();
});

/** An insert whose body and tags come from the caller's `note` object, its kind fixed by the shape. */
function insertNote(db: Executor, kind: string, param: (name: string) => unknown) {
  return db
    .insert(notes)
    .values({ id: param('id') as string, body: param('note.body') as string, tags: param('note.tags') as string[], kind, amount: param('amount') as number, at: param('at') as Date })
    .returning({ id: notes.id, amount: notes.amount, echoed: sql<string>`${notes.body} || '!'` });
}

const RESULT = ['id', 'amount', 'echoed'] as const;
type Result = { id: string; amount: unknown; echoed: string };

async function stored(id: string) {
  const [row] = await database.db.select().from(notes).where(eq(notes.id, id));
  return row;
}

describe('runShaped', () => {
  it('stores what drizzle would store, reading grouped inputs and encoding each by its column', async () => {
    const at = new Date('2031-05-06T07:08:09.123Z');
    const inputs = (id: string): ShapedInputs => ({ id, note: { body: 'a "quoted" body', tags: ['one', 'two'] }, amount: 1.25, at });
    // Twice: the thread keeps a statement from its second run, so both paths of the database are met.
    for (const id of ['n1', 'n2', 'n3']) {
      const rows = await runShaped<Result>(database.db, 'note:plain', (d, param) => insertNote(d, 'plain', param), inputs(id), RESULT);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.id).toBe(id);
      expect(Number(rows[0]!.amount)).toBe(1.25);
      expect(rows[0]!.echoed).toBe('a "quoted" body!');
    }
    await database.db.insert(notes).values({ id: 'drizzle', body: 'a "quoted" body', tags: ['one', 'two'], kind: 'plain', amount: 1.25, at });
    const own = await stored('drizzle');
    for (const id of ['n1', 'n2', 'n3']) expect(await stored(id)).toEqual({ ...own, id });
  });

  it('keeps a shape apart from another: each its own text and its own literal', async () => {
    const at = new Date();
    await runShaped<Result>(database.db, 'note:plain', (d, param) => insertNote(d, 'plain', param), { id: 'k1', note: { body: 'b', tags: [] }, amount: 0, at }, RESULT);
    await runShaped<Result>(database.db, 'note:pinned', (d, param) => insertNote(d, 'pinned', param), { id: 'k2', note: { body: 'c', tags: ['x'] }, amount: 3, at }, RESULT);
    expect(await stored('k1')).toMatchObject({ kind: 'plain', tags: [], amount: 0 });
    expect(await stored('k2')).toMatchObject({ kind: 'pinned', tags: ['x'], amount: 3 });
  });

  it('inside a transaction runs the statement drizzle builds with the values, answering the same columns', async () => {
    const at = new Date('2030-01-01T00:00:00Z');
    const rows = await database.db.transaction((tx) =>
      runShaped<Result>(tx, 'note:plain', (d, param) => insertNote(d, 'plain', param), { id: 't1', note: { body: 'in tx', tags: ['t'] }, amount: 2, at }, RESULT),
    );
    expect(rows.map((row) => ({ ...row, amount: Number(row.amount) }))).toEqual([{ id: 't1', amount: 2, echoed: 'in tx!' }]);
    expect(await stored('t1')).toMatchObject({ body: 'in tx', tags: ['t'], at });
  });

  it('fails as the statement fails, with its SQLSTATE, and writes nothing', async () => {
    const at = new Date();
    const note = { body: 'first', tags: [] };
    await runShaped<Result>(database.db, 'note:plain', (d, param) => insertNote(d, 'plain', param), { id: 'dup', note, amount: 1, at }, RESULT);
    const again = runShaped<Result>(database.db, 'note:plain', (d, param) => insertNote(d, 'plain', param), { id: 'dup', note: { body: 'second', tags: [] }, amount: 1, at }, RESULT);
    await expect(again).rejects.toSatisfy((error) => sqlStateOf(error) === '23505');
    expect(await stored('dup')).toMatchObject({ body: 'first' });
  });
});
