// The end of a turn (settleTurn): the record finished and the charge made together, in one statement
// when the record is as read, else in a transaction; never more than the balance holds, also when
// many turns of one balance end together; the change feed is told of the balance row it charged. On a
// real database (PGlite, or the server in CI's 2nd run).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { creditLedger } from '../credits/credits.tables.js';
import { finishValues, recordToolCall } from '../history/history.records.js';
import { deleteHistory } from '../history/history.repo.js';
import { conversations, history } from '../history/history.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findTwinById } from '../twins/twins.repo.js';
import { findUserById } from '../users/users.repo.js';
import { finishAndCharge, type OneStatementSettle , startRecord, type OpenedRecord } from './turn-record.repo.js';
import { settleTurn } from './turn-end.js';
import { payerFor } from '../credits/payer.js';

let database: TestDatabase;
const db = () => database.db;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

async function personIn(twin: TwinRow, credits: number) {
  const { user } = await buildUser(db(), { twin, credits });
  return user;
}

const open = (twin: TwinRow, userId: string, question = 'Why is the sky blue?') =>
  startRecord(db(), { twinId: twin.id, userId, question, at: new Date('2030-01-01T00:00:00Z') });

const outcome = (answer = 'Rayleigh scattering.') => ({
  answer,
  status: 'complete' as const,
  usage: { inputTokens: 10, outputTokens: 20 },
  models: ['bench-model'],
  at: new Date('2030-01-01T00:01:00Z'),
});

const recordOf = async (id: string) => (await db().select().from(history).where(eq(history.id, id)))[0];
const ledgerOf = (historyId: string) =>
  db()
    .select()
    .from(creditLedger)
    .then((rows) => rows.filter((row) => row.meta?.historyId === historyId));

/** The one-statement settle of a record as it was opened, paid by the person. */
function statementFor(twin: TwinRow, userId: string, opened: OpenedRecord, cost: number): OneStatementSettle {
  const finished = finishValues(opened, { ...outcome(), credits: 0 });
  return {
    record: { id: opened.id, version: opened.version },
    values: finished.values,
    touchesConversation: finished.touchesConversation,
    at: finished.at,
    cost,
    held: 0,
    payer: { account: 'user', twinId: twin.id, userId },
    ledgerMeta: { historyId: opened.id },
  };
}

describe('settleTurn', () => {
  it('finishes the record, charges the cost with its ledger row and moves the conversation, together', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    const record = await open(twin, user.id);
    const settled = await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 1.25, record: outcome() });
    expect(settled.credits).toBe(1.25);
    const [row] = await db().select().from(history).where(eq(history.id, record.id));
    expect(row).toMatchObject({ status: 'complete', answer: 'Rayleigh scattering.', inputTokens: 10, outputTokens: 20, credits: 1.25, models: ['bench-model'] });
    expect(row.completedAt?.toISOString()).toBe('2030-01-01T00:01:00.000Z');
    expect(await findUserById(db(), user.id)).toMatchObject({ credits: 8.75, creditsUsed: 1.25 });
    const ledger = await ledgerOf(record.id);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ account: 'user', userId: user.id, twinId: twin.id, delta: -1.25, balanceAfter: 8.75, reason: 'conversation.turn', actorId: null });
    expect(ledger[0].meta).toEqual({ historyId: record.id, cost: 1.25 });
    const [conversation] = await db().select().from(conversations).where(eq(conversations.id, record.conversationId));
    expect(conversation.lastActivityAt.toISOString()).toBe('2030-01-01T00:01:00.000Z');
  });

  it('charges no more than the balance holds, and keeps what it charged on the record', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 2);
    const record = await open(twin, user.id);
    const settled = await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 5, record: outcome() });
    expect(settled).toEqual({ credits: 2 });
    expect(await recordOf(record.id)).toMatchObject({ credits: 2, status: 'complete' });
    expect(await findUserById(db(), user.id)).toMatchObject({ credits: 0, creditsUsed: 2 });
    expect((await ledgerOf(record.id)).map((row) => [row.delta, row.balanceAfter])).toEqual([[-2, 0]]);
  });

  it("charges a pooling twin's pool, not the person", async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 50 });
    const user = await personIn(twin, 7);
    const record = await open(twin, user.id);
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 3, record: outcome() });
    expect(await findTwinById(db(), twin.id)).toMatchObject({ credits: 47, creditsUsed: 3 });
    expect((await findUserById(db(), user.id))!.credits).toBe(7);
    expect(await ledgerOf(record.id)).toMatchObject([{ account: 'institution', twinId: twin.id, userId: user.id, delta: -3, balanceAfter: 47 }]);
  });

  it('writes no charge for a failed turn or an empty balance', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 4);
    const failed = await open(twin, user.id);
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: failed, cost: 0, record: { answer: '', status: 'failed', error: 'The model is down' } });
    expect((await db().select().from(history).where(eq(history.id, failed.id)))[0]).toMatchObject({ status: 'failed', error: 'The model is down', credits: 0 });
    expect(await ledgerOf(failed.id)).toEqual([]);

    const broke = await personIn(twin, 0);
    const unpaid = await open(twin, broke.id);
    const settled = await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: broke.id }), opened: unpaid, cost: 2, record: outcome() });
    expect(settled).toEqual({ credits: 0 });
    expect(await recordOf(unpaid.id)).toMatchObject({ status: 'complete', credits: 0 });
    expect(await ledgerOf(unpaid.id)).toEqual([]);
    expect((await findUserById(db(), user.id))!.credits).toBe(4);
  });

  it('keeps only the accounting of a record deleted while it streamed, and still charges its usage', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    const record = await open(twin, user.id);
    await deleteHistory(db(), [record.id], { ids: [twin.id] });
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 1, record: outcome('A secret answer') });
    const [row] = await db().select().from(history).where(eq(history.id, record.id));
    expect(row).toMatchObject({ status: 'complete', answer: '', credits: 1, outputTokens: 20 });
    expect(row.deletedAt).not.toBeNull();
    expect((await findUserById(db(), user.id))!.credits).toBe(9);
  });

  it('settles a record changed after it was opened in a transaction instead, keeping the change', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    const record = await open(twin, user.id);
    const stale = statementFor(twin, user.id, record, 1);
    await recordToolCall(db(), record.id, { id: 'call-1', server: 'docs', tool: 'lookup', arguments: { q: 'sky' }, result: 'found', status: 'ok' });
    // The statement refuses a record no longer as read: nothing written, nothing charged.
    const refused = await finishAndCharge(db(), stale);
    expect(refused).toBeUndefined();
    expect((await db().select().from(history).where(eq(history.id, record.id)))[0].status).toBe('streaming');
    expect((await findUserById(db(), user.id))!.credits).toBe(10);
    expect(await ledgerOf(record.id)).toEqual([]);
    // settleTurn falls back to the transaction: the tool call written meanwhile stays on the finished record.
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 1, record: outcome() });
    const [row] = await db().select().from(history).where(eq(history.id, record.id));
    expect(row).toMatchObject({ status: 'complete', credits: 1, toolCalls: [expect.objectContaining({ id: 'call-1', result: 'found' })] });
    expect((await findUserById(db(), user.id))!.credits).toBe(9);
  });

  it('settles from the record as the turn opened it, unless it changed since', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    const untouched = await open(twin, user.id);
    expect(untouched.version).toEqual(expect.any(String));
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: untouched, cost: 1, record: outcome() });
    expect((await db().select().from(history).where(eq(history.id, untouched.id)))[0]).toMatchObject({ status: 'complete', credits: 1 });

    const changed = await open(twin, user.id);
    await recordToolCall(db(), changed.id, { id: 'call-2', server: 'docs', tool: 'lookup', arguments: {}, result: 'kept', status: 'ok' });
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: changed, cost: 1, record: outcome() });
    const [row] = await db().select().from(history).where(eq(history.id, changed.id));
    expect(row).toMatchObject({ status: 'complete', credits: 1, toolCallCount: 1, toolCalls: [expect.objectContaining({ id: 'call-2', result: 'kept' })] });
    expect((await findUserById(db(), user.id))!.credits).toBe(8);
  });

  it('settles inside a caller\'s transaction too, and rolls back with it', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    const record = await open(twin, user.id);
    const settle = statementFor(twin, user.id, record, 2);
    await expect(
      db().transaction(async (tx) => {
        expect(await finishAndCharge(tx, settle)).toEqual({ credits: 2 });
        throw new Error('the caller failed');
      }),
    ).rejects.toThrow('the caller failed');
    expect((await db().select().from(history).where(eq(history.id, record.id)))[0].status).toBe('streaming');
    expect((await findUserById(db(), user.id))!.credits).toBe(10);
    const settled = await db().transaction((tx) => finishAndCharge(tx, settle));
    expect(settled).toEqual({ credits: 2 });
    expect(await recordOf(record.id)).toMatchObject({ status: 'complete', answer: 'Rayleigh scattering.', credits: 2 });
    expect((await findUserById(db(), user.id))!.credits).toBe(8);
    expect(await ledgerOf(record.id)).toMatchObject([{ delta: -2, balanceAfter: 8 }]);
  });

  it('leaves a finished record as it is when asked to finish it again', async () => {
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    const record = await open(twin, user.id);
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 1, record: outcome('first') });
    const again = await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: record, cost: 0, record: { answer: 'second', status: 'failed' } });
    expect(again).toEqual({ credits: 0 });
    expect(await recordOf(record.id)).toMatchObject({ status: 'complete', answer: 'first', credits: 1 });
  });

  it("tells the change feed of the balance row it charged once committed: the person's, the pool's, in either path; nothing when it charged nothing", async () => {
    const told: Array<{ table: string; key: string }> = [];
    const changes = { committed: (change: { table: string; key: string }) => void told.push(change) };
    const twin = await buildTwin(db());
    const user = await personIn(twin, 10);
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: await open(twin, user.id), cost: 1, record: outcome(), changes });
    const changed = await open(twin, user.id);
    await recordToolCall(db(), changed.id, { id: 'call-3', server: 'docs', tool: 'lookup', arguments: {}, result: 'kept', status: 'ok' });
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: changed, cost: 1, record: outcome(), changes });
    const pool = await buildTwin(db(), { poolCredits: true, credits: 50 });
    const member = await personIn(pool, 7);
    await settleTurn(db(), { payer: payerFor(pool, { kind: 'person', userId: member.id }), opened: await open(pool, member.id), cost: 3, record: outcome(), changes });
    const failed = await open(twin, user.id);
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: user.id }), opened: failed, cost: 0, record: { answer: '', status: 'failed' }, changes });
    const broke = await personIn(twin, 0);
    await settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: broke.id }), opened: await open(twin, broke.id), cost: 2, record: outcome(), changes });
    expect(told).toEqual([
      { table: 'users', key: user.id },
      { table: 'users', key: user.id },
      { table: 'institutions', key: pool.id },
    ]);
  });

  it('never overdraws a pool that 40 turns ending together would exceed', async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 20 });
    const people = await Promise.all([personIn(twin, 0), personIn(twin, 0)]);
    const records = await Promise.all(Array.from({ length: 40 }, (_, i) => open(twin, people[i % 2].id, `question ${i}`)));
    const settled = await Promise.all(
      records.map((record, i) => settleTurn(db(), { payer: payerFor(twin, { kind: 'person', userId: people[i % 2].id }), opened: record, cost: 0.75, record: outcome() })),
    );
    const charged = settled.reduce((sum, s) => sum + s.credits, 0);
    expect(charged).toBeCloseTo(20, 6);
    expect(await findTwinById(db(), twin.id)).toMatchObject({ credits: 0, creditsUsed: 20 });
    const ledger = (await db().select().from(creditLedger).where(eq(creditLedger.twinId, twin.id))).filter((row) => row.reason === 'conversation.turn');
    expect(ledger.reduce((sum, row) => sum - row.delta, 0)).toBeCloseTo(20, 6);
    // Each charge was taken from the balance left by the one before it.
    const afters = ledger.map((row) => row.balanceAfter).sort((a, b) => b - a);
    expect(afters.at(-1)).toBe(0);
    expect(new Set(afters).size).toBe(afters.length);
    const rows = await db().select().from(history).where(eq(history.twinId, twin.id));
    expect(rows.every((row) => row.status === 'complete')).toBe(true);
    expect(rows.reduce((sum, row) => sum + row.credits, 0)).toBeCloseTo(20, 6);
  });
});
