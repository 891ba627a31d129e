// A turn's settles written together (settle-groups.ts): a group waits while other turns answer and goes
// when full, when its window ends or at close; each record ends exactly as its lone settle would have
// ended it, charges and ledger rows included, also when groups of the same balances overlap; one that
// moved on, a balance below its holds, or a settle that fails never takes the others with it. A settle
// costing more than it holds runs at once, alone. On a real database (PGlite, or the server in CI's 2nd
// run).
import { asc, eq, inArray } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { creditLedger } from '../credits/credits.tables.js';
import { payerFor, type Payer } from '../credits/payer.js';
import { finishValues, recordToolCall } from '../history/history.records.js';
import { deleteHistory } from '../history/history.repo.js';
import { conversations, history } from '../history/history.tables.js';
import { twins, type TwinRow } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { createSettleGroups, type SettleGroupOptions } from './settle-groups.js';
import { settleTurn } from './turn-end.js';
import { startRecord, type OneStatementSettle, type OpenedRecord } from './turn-record.repo.js';

let database: TestDatabase;
const db = () => database.db;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

const OPENED_AT = new Date('2030-01-01T00:00:00Z');

async function twinWithPerson() {
  const twin = await buildTwin(db());
  const { user } = await buildUser(db(), { twin, credits: 10 });
  return { twin, userId: user.id };
}

const open = (twin: TwinRow, userId: string, conversationId?: string, hold?: { account: 'user' | 'institution'; amount: number }) =>
  startRecord(db(), { twinId: twin.id, userId, question: 'Why is the sky blue?', conversationId, at: OPENED_AT, hold });

/** A free turn's settle of a record as opened, ending at `at` with `answer`. */
function freeSettle(twin: TwinRow, userId: string, opened: OpenedRecord, answer: string, at = new Date('2030-01-01T00:01:00Z'), extra = {}): OneStatementSettle {
  const finished = finishValues(opened, { answer, status: 'complete', usage: { inputTokens: 10, outputTokens: 20 }, models: ['free-model'], at, credits: 0, ...extra });
  return {
    record: { id: opened.id, version: opened.version },
    values: finished.values,
    touchesConversation: finished.touchesConversation,
    at: finished.at,
    cost: 0,
    held: 0,
    payer: { account: 'user', twinId: twin.id, userId },
    ledgerMeta: { historyId: opened.id },
  };
}

/** What the groups warned of: a group statement that failed (each of its settles then ran alone). */
let warnings: string[] = [];
beforeEach(() => {
  warnings = [];
});
afterEach(() => {
  if (!expect.getState().currentTestName?.includes('failing')) expect(warnings).toEqual([]);
});

/** Groups that would wait a minute for company unless told otherwise: a test decides when they go. */
const groups = (options: Partial<SettleGroupOptions> = {}) =>
  createSettleGroups(db(), { inProgress: () => 100, windowMs: 60_000, log: { warn: (_details, message) => warnings.push(message) }, ...options });

const recordsOf = (ids: string[]) => db().select().from(history).where(inArray(history.id, ids));
const conversationOf = async (id: string) => (await db().select().from(conversations).where(eq(conversations.id, id)))[0];

/** Whether a promise has settled within a few turns of the loop and a short wait. */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true), () => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return settled;
}

describe('settle groups', () => {
  it('waits while others answer, then finishes every record of the group as its own settle would', async () => {
    const { twin, userId } = await twinWithPerson();
    const records = await Promise.all([open(twin, userId), open(twin, userId), open(twin, userId)]);
    const settles = groups({ max: 3 });
    const first = settles.settle(freeSettle(twin, userId, records[0], 'First answer.'));
    const second = settles.settle(freeSettle(twin, userId, records[1], 'Second answer.'));
    expect(await hasSettled(first)).toBe(false);
    expect((await recordsOf([records[0].id])).map((row) => row.status)).toEqual(['streaming']);
    const third = settles.settle(freeSettle(twin, userId, records[2], 'Third answer.'));
    expect(await Promise.all([first, second, third])).toEqual([{ credits: 0 }, { credits: 0 }, { credits: 0 }]);
    const rows = await recordsOf(records.map((record) => record.id));
    const byId = new Map(rows.map((row) => [row.id, row]));
    records.forEach((record, index) => {
      const row = byId.get(record.id)!;
      expect(row).toMatchObject({
        answer: ['First answer.', 'Second answer.', 'Third answer.'][index],
        status: 'complete',
        inputTokens: 10,
        outputTokens: 20,
        models: ['free-model'],
        credits: 0,
        heldCredits: 0,
        completedAt: new Date('2030-01-01T00:01:00Z'),
      });
      expect(row.updatedAt.getTime()).toBeGreaterThan(record.updatedAt.getTime() - 1);
    });
    const conversation = await conversationOf(records[0].conversationId);
    expect(conversation.lastActivityAt).toEqual(new Date('2030-01-01T00:01:00Z'));
  });

  it('goes at once when no other turn is answering', async () => {
    const { twin, userId } = await twinWithPerson();
    const record = await open(twin, userId);
    const settles = groups({ inProgress: () => 1 });
    await expect(settles.settle(freeSettle(twin, userId, record, 'Alone.'))).resolves.toEqual({ credits: 0 });
    expect((await recordsOf([record.id]))[0]).toMatchObject({ answer: 'Alone.', status: 'complete' });
  });

  it('goes when its window ends', async () => {
    const { twin, userId } = await twinWithPerson();
    const records = await Promise.all([open(twin, userId), open(twin, userId)]);
    const settles = groups({ windowMs: 150 });
    const started = Date.now();
    const both = Promise.all(records.map((record, index) => settles.settle(freeSettle(twin, userId, record, `Answer ${index}.`))));
    expect(await hasSettled(both)).toBe(false);
    await expect(both).resolves.toEqual([{ credits: 0 }, { credits: 0 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect((await recordsOf(records.map((record) => record.id))).map((row) => row.status)).toEqual(['complete', 'complete']);
  });

  it('writes what waits at close', async () => {
    const { twin, userId } = await twinWithPerson();
    const records = await Promise.all([open(twin, userId), open(twin, userId)]);
    const settles = groups();
    const both = Promise.all(records.map((record) => settles.settle(freeSettle(twin, userId, record, 'Closing.'))));
    await settles.close();
    await expect(both).resolves.toEqual([{ credits: 0 }, { credits: 0 }]);
    expect((await recordsOf(records.map((record) => record.id))).map((row) => row.answer)).toEqual(['Closing.', 'Closing.']);
  });

  it('runs a settle costing more than it holds at once and alone, whatever waits', async () => {
    const { twin, userId } = await twinWithPerson();
    const [free, priced] = await Promise.all([open(twin, userId), open(twin, userId)]);
    const settles = groups();
    const waitingFree = settles.settle(freeSettle(twin, userId, free, 'Free.'));
    await expect(settles.settle({ ...freeSettle(twin, userId, priced, 'Priced.'), cost: 2 })).resolves.toEqual({ credits: 2 });
    expect(await hasSettled(waitingFree)).toBe(false);
    await settles.close();
    await expect(waitingFree).resolves.toEqual({ credits: 0 });
  });

  it('touches a conversation with two settles in one group once, at the later one', async () => {
    const { twin, userId } = await twinWithPerson();
    const first = await open(twin, userId);
    const second = await open(twin, userId, first.conversationId);
    expect(second.conversationId).toBe(first.conversationId);
    const settles = groups({ max: 2 });
    await Promise.all([
      settles.settle(freeSettle(twin, userId, first, 'Earlier.', new Date('2030-01-01T00:03:00Z'))),
      settles.settle(freeSettle(twin, userId, second, 'Later.', new Date('2030-01-01T00:05:00Z'))),
    ]);
    expect((await conversationOf(first.conversationId)).lastActivityAt).toEqual(new Date('2030-01-01T00:05:00Z'));
  });

  it('writes records setting different columns in one group, each with its own', async () => {
    const { twin, userId } = await twinWithPerson();
    const [plain, guided] = await Promise.all([open(twin, userId), open(twin, userId)]);
    const guidance = [{ text: 'Answer briefly.', at: '2030-01-01T00:00:30.000Z' }];
    const settles = groups({ max: 2 });
    await Promise.all([
      settles.settle(freeSettle(twin, userId, plain, 'Plain.')),
      settles.settle(freeSettle(twin, userId, guided, 'Guided.', undefined, { guidance })),
    ]);
    const rows = new Map((await recordsOf([plain.id, guided.id])).map((row) => [row.id, row]));
    expect(rows.get(plain.id)).toMatchObject({ answer: 'Plain.', status: 'complete', guidance: [] });
    expect(rows.get(guided.id)).toMatchObject({ answer: 'Guided.', status: 'complete', guidance });
  });

  it('leaves a record that moved on to its caller, who ends it in a transaction; the rest of the group is finished', async () => {
    const { twin, userId } = await twinWithPerson();
    const [kept, changed, deleted] = await Promise.all([open(twin, userId), open(twin, userId), open(twin, userId)]);
    await recordToolCall(db(), changed.id, { id: 'call-1', server: 'files', tool: 'search', arguments: {}, status: 'ok' });
    await deleteHistory(db(), [deleted.id], { ids: [twin.id] });
    const settles = groups({ max: 3 });
    const through = (record: OpenedRecord, answer: string) =>
      settleTurn(db(), {
        payer: { account: 'user', twinId: twin.id, userId },
        opened: record,
        cost: 0,
        groups: settles,
        record: { answer, status: 'complete', usage: { inputTokens: 1, outputTokens: 2 } },
      });
    await Promise.all([through(kept, 'Kept.'), through(changed, 'Changed.'), through(deleted, 'Deleted.')]);
    const rows = new Map((await recordsOf([kept.id, changed.id, deleted.id])).map((row) => [row.id, row]));
    expect(rows.get(kept.id)).toMatchObject({ answer: 'Kept.', status: 'complete' });
    // The tool call written during the turn stays; the transaction's settle finished it.
    expect(rows.get(changed.id)).toMatchObject({ answer: 'Changed.', status: 'complete', toolCallCount: 1 });
    // A deleted record keeps its accounting only: no answer written back.
    expect(rows.get(deleted.id)).toMatchObject({ status: 'complete', answer: '', inputTokens: 1, outputTokens: 2 });
  });

  it('never lets one failing settle fail the others of its group', async () => {
    const { twin, userId } = await twinWithPerson();
    const [good, bad] = await Promise.all([open(twin, userId), open(twin, userId)]);
    const settles = groups({ max: 2 });
    const broken = freeSettle(twin, userId, bad, 'Broken.');
    broken.values = { ...broken.values, inputTokens: 'many' as unknown as number };
    const [goodOutcome, badOutcome] = await Promise.allSettled([settles.settle(freeSettle(twin, userId, good, 'Good.')), settles.settle(broken)]);
    expect(goodOutcome).toEqual({ status: 'fulfilled', value: { credits: 0 } });
    expect(badOutcome.status).toBe('rejected');
    const rows = new Map((await recordsOf([good.id, bad.id])).map((row) => [row.id, row]));
    expect(rows.get(good.id)).toMatchObject({ answer: 'Good.', status: 'complete' });
    expect(rows.get(bad.id)).toMatchObject({ answer: '', status: 'streaming' });
    expect(warnings).toEqual(['a group of settles failed; each runs alone']);
  });

  it('charges each settle of a group its cost, gives back its hold, and writes its ledger row with the balance after it', async () => {
    const { twin, userId: ann } = await twinWithPerson();
    const { user: bob } = await buildUser(db(), { twin, credits: 5 });
    const pool = await buildTwin(db(), { poolCredits: true, credits: 20 });
    const { user: cat } = await buildUser(db(), { twin: pool, credits: 0 });
    const held = (payer: Payer, amount: number) => open(payer.account === 'institution' ? pool : twin, payer.userId!, undefined, { account: payer.account, amount });
    const payers = { ann: payerFor(twin, { kind: 'person', userId: ann }), bob: payerFor(twin, { kind: 'person', userId: bob.id }), cat: payerFor(pool, { kind: 'person', userId: cat.id }) };
    const annFirst = await held(payers.ann, 3);
    const annSecond = await held(payers.ann, 3);
    const bobs = await held(payers.bob, 2);
    const cats = await held(payers.cat, 4);
    const free = await open(twin, ann);
    const priced = (record: OpenedRecord, payer: Payer, cost: number, holding: number) => ({ ...freeSettle(twin, payer.userId!, record, 'Priced.'), cost, held: holding, payer, ledgerMeta: { historyId: record.id, cost } });
    const settles = groups({ max: 5 });
    const outcomes = await Promise.all([
      settles.settle(priced(annFirst, payers.ann, 1.5, 3)),
      settles.settle(priced(annSecond, payers.ann, 2, 3)),
      settles.settle(priced(bobs, payers.bob, 0.25, 2)),
      settles.settle(priced(cats, payers.cat, 1, 4)),
      settles.settle(freeSettle(twin, ann, free, 'Free.')),
    ]);
    expect(outcomes).toEqual([{ credits: 1.5 }, { credits: 2 }, { credits: 0.25 }, { credits: 1 }, { credits: 0 }]);
    const balance = async (id: string) => (await db().select().from(users).where(eq(users.id, id)))[0];
    expect(await balance(ann)).toMatchObject({ credits: 6.5, creditsHeld: 0, creditsUsed: 3.5 });
    expect(await balance(bob.id)).toMatchObject({ credits: 4.75, creditsHeld: 0, creditsUsed: 0.25 });
    expect((await db().select().from(twins).where(eq(twins.id, pool.id)))[0]).toMatchObject({ credits: 19, creditsHeld: 0, creditsUsed: 1 });
    const records = new Map((await recordsOf([annFirst.id, annSecond.id, bobs.id, cats.id, free.id])).map((row) => [row.id, row]));
    expect([annFirst, annSecond, bobs, cats, free].map((record) => [records.get(record.id)!.credits, records.get(record.id)!.heldCredits, records.get(record.id)!.status])).toEqual([
      [1.5, 0, 'complete'],
      [2, 0, 'complete'],
      [0.25, 0, 'complete'],
      [1, 0, 'complete'],
      [0, 0, 'complete'],
    ]);
    const ledger = await db().select().from(creditLedger).where(inArray(creditLedger.userId, [ann, bob.id, cat.id])).orderBy(asc(creditLedger.balanceAfter));
    expect(ledger.map((row) => [row.account, row.userId, row.twinId, row.delta, row.balanceAfter, row.reason, row.meta])).toEqual([
      ['user', bob.id, twin.id, -0.25, 4.75, 'conversation.turn', { historyId: bobs.id, cost: 0.25 }],
      ['user', ann, twin.id, -2, 6.5, 'conversation.turn', { historyId: annSecond.id, cost: 2 }],
      ['user', ann, twin.id, -1.5, 8.5, 'conversation.turn', { historyId: annFirst.id, cost: 1.5 }],
      ['institution', cat.id, pool.id, -1, 19, 'conversation.turn', { historyId: cats.id, cost: 1 }],
    ]);
  });

  it('leaves the settles of a balance below what turns hold to their callers, who charge what it still has, as alone', async () => {
    const { twin, userId: dee } = await twinWithPerson();
    const { user: eve } = await buildUser(db(), { twin, credits: 10 });
    const payers = { dee: payerFor(twin, { kind: 'person', userId: dee }), eve: payerFor(twin, { kind: 'person', userId: eve.id }) };
    const dees = await open(twin, dee, undefined, { account: 'user', amount: 3 });
    const eves = await open(twin, eve.id, undefined, { account: 'user', amount: 3 });
    // An administrator takes Dee's credits down to 2 while 3 are held: 1 below the holds.
    await db().update(users).set({ credits: 2 }).where(eq(users.id, dee));
    const settles = groups({ max: 2 });
    const through = (record: OpenedRecord, payer: Payer, cost: number) =>
      settleTurn(db(), { payer, opened: record, cost, groups: settles, record: { answer: 'Priced.', status: 'complete', usage: { inputTokens: 1, outputTokens: 2 } } });
    expect(await Promise.all([through(dees, payers.dee, 2.5), through(eves, payers.eve, 2.5)])).toEqual([{ credits: 2 }, { credits: 2.5 }]);
    const balances = new Map((await db().select().from(users).where(inArray(users.id, [dee, eve.id]))).map((row) => [row.id, row]));
    expect(balances.get(dee)).toMatchObject({ credits: 0, creditsHeld: 0 });
    expect(balances.get(eve.id)).toMatchObject({ credits: 7.5, creditsHeld: 0 });
  });

  it('charges every settle in full when groups of the same two balances overlap, in either order', async () => {
    const { twin, userId: fay } = await twinWithPerson();
    await db().update(users).set({ credits: 100 }).where(eq(users.id, fay));
    const { user: gil } = await buildUser(db(), { twin, credits: 100 });
    const payers = [payerFor(twin, { kind: 'person', userId: fay }), payerFor(twin, { kind: 'person', userId: gil.id })];
    // Groups of two, Fay's first, then Gil's first, and so on: written at once, each group as it fills.
    const order = Array.from({ length: 24 }, (_, i) => payers[(i + Math.floor(i / 2)) % 2]!);
    const records = await Promise.all(order.map((payer) => open(twin, payer.userId!, undefined, { account: 'user', amount: 2 })));
    const settles = groups({ max: 2 });
    const outcomes = await Promise.all(
      records.map((record, i) => settles.settle({ ...freeSettle(twin, order[i]!.userId!, record, 'Priced.'), cost: 1.25, held: 2, payer: order[i]!, ledgerMeta: { historyId: record.id } })),
    );
    expect(outcomes.every((outcome) => outcome?.credits === 1.25)).toBe(true);
    for (const person of [fay, gil.id]) {
      const [row] = await db().select().from(users).where(eq(users.id, person));
      expect(row).toMatchObject({ credits: 100 - 12 * 1.25, creditsHeld: 0, creditsUsed: 12 * 1.25 });
      const after = (await db().select().from(creditLedger).where(eq(creditLedger.userId, person))).map((entry) => entry.balanceAfter).sort((a, b) => b - a);
      expect(after).toEqual(Array.from({ length: 12 }, (_, i) => 100 - (i + 1) * 1.25));
    }
  });
});
