// The record API the conversation engine uses (start, finish, recent exchanges), on a real database.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildTwin, buildUser, type BuiltUser } from '../../../test/support/factories.js';
import { withTransaction } from '../../platform/db/client.js';
import { CONFIDENTIAL_SUFFIX, redactConfidential } from './history.detail.js';
import { startRecord, UnfundedOpeningError } from '../conversations/turn-record.repo.js';
import { finishRecord, recentExchanges, recordToolCall } from './history.records.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { deleteHistory } from './history.repo.js';
import { conversations, history, type RetrievalEntry } from './history.tables.js';

let database: TestDatabase;
let person: BuiltUser;
let other: BuiltUser;

beforeAll(async () => {
  database = await openTestDatabase();
  person = await buildUser(database.db);
  other = await buildUser(database.db, { twin: person.twin });
});
afterAll(() => database.close());

const twin = () => person.twin!.id;

function entry(overrides: Partial<RetrievalEntry> = {}): RetrievalEntry {
  return { uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkText: 'The moon is made of rock.', chunkIndex: 0, length: 25, score: 0.8, mode: 'RAG', confidential: false, ...overrides };
}

describe('startRecord', () => {
  it('opens a streaming record in a new conversation titled after the question', async () => {
    const record = await withTransaction(database.db, (tx) =>
      startRecord(tx, { twinId: twin(), userId: person.user.id, assistantId: 'b'.repeat(24), assistantName: 'Tutor', question: 'What is the moon made of?\nPlease be brief.', models: ['gpt-4o'] }),
    );
    expect(record).toMatchObject({ status: 'streaming', question: 'What is the moon made of?\nPlease be brief.', answer: '', assistantName: 'Tutor', models: ['gpt-4o'] });
    const [conversation] = await database.db.select().from(conversations).where(eq(conversations.id, record.conversationId));
    expect(conversation).toMatchObject({ twinId: twin(), userId: person.user.id, title: 'What is the moon made of?' });
  });

  it('answers the record exactly as stored, without reading it back: the defaults it fills in are the table\'s', async () => {
    const plain = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'as stored?' });
    const rich = await buildUser(database.db, { twin: person.twin, credits: 10 });
    const held = await startRecord(database.db, {
      twinId: twin(),
      userId: rich.user.id,
      assistantId: 'c'.repeat(24),
      assistantName: 'Guide',
      question: 'held and continued?',
      models: ['m-1'],
      processId: 'd'.repeat(24),
      hold: { account: 'user', amount: 1.25 },
    });
    const continued = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'again', conversationId: plain.conversationId });
    for (const opened of [plain, held, continued]) {
      const [stored] = await database.db
        .select({ row: history, version: sql<string>`${history.updatedAt}::text` })
        .from(history)
        .where(eq(history.id, opened.id));
      expect(opened).toEqual({ ...stored!.row, version: stored!.version });
    }
    expect(continued.conversationId).toBe(plain.conversationId);
  });

  it('continues the person’s own conversation and moves its last activity', async () => {
    const first = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'one', at: new Date('2030-01-01T00:00:00Z') });
    const second = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'two', conversationId: first.conversationId, at: new Date('2030-01-02T00:00:00Z') });
    expect(second.conversationId).toBe(first.conversationId);
    const [conversation] = await database.db.select().from(conversations).where(eq(conversations.id, first.conversationId));
    expect(conversation.lastActivityAt.toISOString()).toBe('2030-01-02T00:00:00.000Z');
  });

  it('never joins another person’s conversation, nor one of another twin: it starts a new one', async () => {
    const mine = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'mine' });
    const theirs = await startRecord(database.db, { twinId: twin(), userId: other.user.id, question: 'theirs', conversationId: mine.conversationId });
    expect(theirs.conversationId).not.toBe(mine.conversationId);
    const elsewhere = await buildTwin(database.db);
    const moved = await startRecord(database.db, { twinId: elsewhere.id, userId: person.user.id, question: 'elsewhere', conversationId: mine.conversationId });
    expect(moved.conversationId).not.toBe(mine.conversationId);
  });

  it('continues with an unknown conversation id as a new conversation', async () => {
    const started = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'lost', conversationId: 'z'.repeat(24) });
    expect(started.conversationId).not.toBe('z'.repeat(24));
    const [conversation] = await database.db.select().from(conversations).where(eq(conversations.id, started.conversationId));
    expect(conversation).toMatchObject({ userId: person.user.id, title: 'lost' });
  });

  it('commits without waiting for the WAL flush, in its own statement or the caller\'s transaction only', async () => {
    const setting = async (executor: Parameters<typeof startRecord>[0]) => {
      const result = (await executor.execute(sql`select current_setting('synchronous_commit') as value`)) as unknown as { rows: Array<{ value: string }> };
      return result.rows[0].value;
    };
    const inside = await withTransaction(database.db, async (tx) => {
      await startRecord(tx, { twinId: twin(), userId: person.user.id, question: 'in a transaction' });
      return setting(tx);
    });
    expect(inside).toBe('off');
    await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'on its own' });
    // Nothing leaks to the connection: the next statements (any pooled connection) wait for the flush again.
    expect(await Promise.all([setting(database.db), setting(database.db), setting(database.db)])).toEqual(['on', 'on', 'on']);
  });
});

describe('startRecord holding from the balance that pays (hold)', () => {
  const counts = async (userId: string) => {
    const [records] = await database.db.select({ n: sql<number>`count(*)::int` }).from(history).where(eq(history.userId, userId));
    const [opened] = await database.db.select({ n: sql<number>`count(*)::int` }).from(conversations).where(eq(conversations.userId, userId));
    return { records: records.n, conversations: opened.n };
  };
  const heldBy = async (userId: string) => (await database.db.select({ held: users.creditsHeld, credits: users.credits }).from(users).where(eq(users.id, userId)))[0];

  it("holds while the person's spendable balance covers the amount, and refuses as a whole when it does not", async () => {
    const payer = await buildUser(database.db, { twin: person.twin, credits: 1 });
    const opened = await startRecord(database.db, { twinId: twin(), userId: payer.user.id, question: 'funded', hold: { account: 'user', amount: 0.6 } });
    expect(opened).toMatchObject({ status: 'streaming', heldCredits: 0.6, heldAccount: 'user' });
    expect(await heldBy(payer.user.id)).toEqual({ held: 0.6, credits: 1 });
    const before = await counts(payer.user.id);
    // 0.4 is left to hold: 0.5 does not fit.
    const refused = startRecord(database.db, { twinId: twin(), userId: payer.user.id, question: 'too much', hold: { account: 'user', amount: 0.5 } });
    await expect(refused).rejects.toBeInstanceOf(UnfundedOpeningError);
    await expect(refused).rejects.toMatchObject({ account: 'user' });
    // Continuing a conversation touches nothing either.
    await expect(
      startRecord(database.db, { twinId: twin(), userId: payer.user.id, question: 'more', conversationId: opened.conversationId, hold: { account: 'user', amount: 0.5 } }),
    ).rejects.toBeInstanceOf(UnfundedOpeningError);
    expect(await counts(payer.user.id)).toEqual(before);
    expect(await heldBy(payer.user.id)).toEqual({ held: 0.6, credits: 1 });
    const [conversation] = await database.db.select().from(conversations).where(eq(conversations.id, opened.conversationId));
    expect(conversation.lastActivityAt.getTime()).toBe(opened.createdAt.getTime());
    // What is left fits exactly.
    await startRecord(database.db, { twinId: twin(), userId: payer.user.id, question: 'the rest', hold: { account: 'user', amount: 0.4 } });
    expect(await heldBy(payer.user.id)).toEqual({ held: 1, credits: 1 });
  });

  it('finishing a record gives its hold back, once', async () => {
    const payer = await buildUser(database.db, { twin: person.twin, credits: 2 });
    const opened = await startRecord(database.db, { twinId: twin(), userId: payer.user.id, question: 'held', hold: { account: 'user', amount: 1.5 } });
    const finished = await finishRecord(database.db, opened.id, { answer: '', status: 'failed', error: 'stopped' });
    expect(finished).toMatchObject({ status: 'failed', heldCredits: 0, credits: 0 });
    await finishRecord(database.db, opened.id, { answer: '', status: 'failed', error: 'again' });
    expect(await heldBy(payer.user.id)).toEqual({ held: 0, credits: 2 });
  });

  it("holds from the twin's pool for 'institution', whatever the person's own balance", async () => {
    const pool = await buildTwin(database.db, { credits: 0 });
    const rich = await buildUser(database.db, { twin: pool, credits: 100 });
    const refused = startRecord(database.db, { twinId: pool.id, userId: rich.user.id, question: 'pool empty', hold: { account: 'institution', amount: 0.1 } });
    await expect(refused).rejects.toMatchObject({ account: 'institution' });
    expect(await counts(rich.user.id)).toEqual({ records: 0, conversations: 0 });
    await database.db.update(twins).set({ credits: 1 }).where(eq(twins.id, pool.id));
    const opened = await startRecord(database.db, { twinId: pool.id, userId: rich.user.id, question: 'pool funded', hold: { account: 'institution', amount: 1 } });
    expect(opened).toMatchObject({ question: 'pool funded', heldAccount: 'institution', heldCredits: 1 });
    const [row] = await database.db.select({ held: twins.creditsHeld }).from(twins).where(eq(twins.id, pool.id));
    expect(row.held).toBe(1);
    expect(await heldBy(rich.user.id)).toEqual({ held: 0, credits: 100 });
  });

  it('refuses inside a transaction too, and the transaction writes nothing', async () => {
    const broke = await buildUser(database.db, { twin: person.twin, credits: 0 });
    await expect(
      withTransaction(database.db, (tx) => startRecord(tx, { twinId: twin(), userId: broke.user.id, question: 'in a transaction', hold: { account: 'user', amount: 0.01 } })),
    ).rejects.toBeInstanceOf(UnfundedOpeningError);
    expect(await counts(broke.user.id)).toEqual({ records: 0, conversations: 0 });
  });
});

describe('finishRecord', () => {
  it('stores the answer, usage, credits, models, detail and counts', async () => {
    const started = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'q', models: ['planned'] });
    const finished = await withTransaction(database.db, (tx) =>
      finishRecord(tx, started.id, {
        answer: 'The answer',
        status: 'complete',
        usage: { inputTokens: 120, outputTokens: 30, reasoningTokens: 5 },
        models: ['gpt-4o', 'gpt-4o-mini'],
        credits: 1.25,
        toolCalls: [{ id: 't1', server: 'calendar', tool: 'list_events', arguments: { day: 'today' }, result: '3 events', status: 'ok', approval: { decision: 'approve', decidedAt: '2030-01-01T00:00:00.000Z' } }],
        subagents: [{ id: 's1', name: 'researcher', task: 'look it up', transcript: [{ role: 'assistant', content: 'found it' }], status: 'complete', steps: 2, failedSteps: 0 }],
        ragSearch: [entry(), entry({ chunkIndex: 1 })],
        memories: [{ key: 'name', value: 'Ada', shared: false }],
        reasoning: 'thinking…',
      }),
    );
    expect(finished).toMatchObject({
      status: 'complete',
      answer: 'The answer',
      inputTokens: 120,
      outputTokens: 30,
      reasoningTokens: 5,
      credits: 1.25,
      models: ['gpt-4o', 'gpt-4o-mini'],
      toolCallCount: 1,
      subagentCount: 1,
      ragSearchCount: 2,
      memoryCount: 1,
      ragSearchMode: 'RAG',
      reasoning: 'thinking…',
    });
    expect(finished.toolCalls[0].approval).toEqual({ decision: 'approve', decidedAt: '2030-01-01T00:00:00.000Z' });
    expect(finished.completedAt).toBeInstanceOf(Date);
  });

  it('cuts confidential chunk text to its preview before storing it', async () => {
    const started = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'q' });
    const secret = 'S'.repeat(250);
    const finished = await finishRecord(database.db, started.id, {
      answer: 'a',
      status: 'complete',
      ragSearch: [entry({ chunkText: secret, length: 250, confidential: true }), entry({ chunkText: 'short secret', confidential: true })],
    });
    expect(finished.ragSearch[0].chunkText).toBe('S'.repeat(100) + CONFIDENTIAL_SUFFIX);
    expect(finished.ragSearch[0].length).toBe(250);
    expect(finished.ragSearch[1].chunkText).toBe('short secret');
    const [stored] = await database.db.select().from(history).where(eq(history.id, started.id));
    expect(JSON.stringify(stored.ragSearch)).not.toContain('S'.repeat(101));
  });

  it('is idempotent: a finished record is returned unchanged', async () => {
    const started = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'q' });
    await finishRecord(database.db, started.id, { answer: 'first', status: 'cancelled', credits: 0.5 });
    const again = await finishRecord(database.db, started.id, { answer: 'second', status: 'complete', credits: 9 });
    expect(again).toMatchObject({ answer: 'first', status: 'cancelled', credits: 0.5 });
  });

  it('keeps only usage and credits of a record its owner deleted while it streamed', async () => {
    const started = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'private' });
    expect(await deleteHistory(database.db, [started.id], { ids: [twin()] }, person.user.id)).toBe(1);
    const finished = await finishRecord(database.db, started.id, { answer: 'should not be kept', status: 'complete', credits: 2, usage: { inputTokens: 10, outputTokens: 4 } });
    expect(finished).toMatchObject({ answer: '', question: '', status: 'complete', credits: 2, inputTokens: 10, outputTokens: 4 });
  });

  it('refuses an unknown record', async () => {
    await expect(finishRecord(database.db, 'f'.repeat(24), { answer: 'a', status: 'complete' })).rejects.toThrow(/does not exist/);
  });
});

describe('recordToolCall', () => {
  it('puts a decided tool call on the message during the turn, and finishRecord keeps it', async () => {
    const started = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'book it' });
    const pending = { id: 'call-1', server: 'calendar', tool: 'book', arguments: { at: '10:00' }, status: 'pending' as const };
    await recordToolCall(database.db, started.id, pending);
    const decided = await withTransaction(database.db, (tx) =>
      recordToolCall(tx, started.id, { ...pending, status: 'ok', result: 'booked', approval: { decision: 'approve_conversation', decidedAt: '2031-01-01T00:00:00.000Z' } }),
    );
    expect(decided?.toolCalls).toEqual([{ ...pending, status: 'ok', result: 'booked', approval: { decision: 'approve_conversation', decidedAt: '2031-01-01T00:00:00.000Z' } }]);
    expect(decided?.toolCallCount).toBe(1);

    const finished = await finishRecord(database.db, started.id, { answer: 'Booked.', status: 'complete' });
    expect(finished.toolCalls).toHaveLength(1);
    expect(finished.toolCallCount).toBe(1);
    expect(await recordToolCall(database.db, started.id, { ...pending, id: 'late' })).toBeUndefined();
  });
});

describe('recentExchanges', () => {
  it('returns the last finished exchanges of the conversation, oldest first', async () => {
    const at = (day: number) => new Date(Date.UTC(2031, 0, day));
    const first = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'q1', at: at(1) });
    await finishRecord(database.db, first.id, { answer: 'a1', status: 'complete' });
    const conversationId = first.conversationId;
    for (const [day, status] of [[2, 'complete'], [3, 'failed'], [4, 'cancelled'], [5, 'complete']] as const) {
      const record = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: `q${day}`, conversationId, at: at(day) });
      await finishRecord(database.db, record.id, { answer: status === 'failed' ? '' : `a${day}`, status });
    }
    await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'still streaming', conversationId, at: at(6) });

    const recent = await recentExchanges(database.db, conversationId, person.user.id, 3);
    expect(recent.map((exchange) => [exchange.question, exchange.answer])).toEqual([['q2', 'a2'], ['q4', 'a4'], ['q5', 'a5']]);
    expect(await recentExchanges(database.db, conversationId, person.user.id, 0)).toEqual([]);
    expect(await recentExchanges(database.db, conversationId, other.user.id, 3)).toEqual([]);
  });

  it("reads as many as the person's own Remember History count with 'as-set'", async () => {
    const at = (day: number) => new Date(Date.UTC(2032, 0, day));
    const first = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: 'q1', at: at(1) });
    await finishRecord(database.db, first.id, { answer: 'a1', status: 'complete' });
    const conversationId = first.conversationId;
    for (const day of [2, 3]) {
      const record = await startRecord(database.db, { twinId: twin(), userId: person.user.id, question: `q${day}`, conversationId, at: at(day) });
      await finishRecord(database.db, record.id, { answer: `a${day}`, status: 'complete' });
    }
    const asSet = async (count: number) => {
      await database.db.update(users).set({ rememberHistoryCount: count }).where(eq(users.id, person.user.id));
      return (await recentExchanges(database.db, conversationId, person.user.id, 'as-set')).map((exchange) => exchange.question);
    };
    expect(await asSet(2)).toEqual(['q2', 'q3']);
    expect(await asSet(10)).toEqual(['q1', 'q2', 'q3']);
    expect(await asSet(0)).toEqual([]);
    // Another person reads nothing of a conversation not theirs, whatever their own count.
    expect(await recentExchanges(database.db, conversationId, other.user.id, 'as-set')).toEqual([]);
  });
});

describe('redactConfidential', () => {
  it('keeps short text, cuts long text to 100 characters plus the suffix, and is idempotent', () => {
    expect(redactConfidential('x'.repeat(100))).toBe('x'.repeat(100));
    const cut = redactConfidential('y'.repeat(101));
    expect(cut).toBe('y'.repeat(100) + CONFIDENTIAL_SUFFIX);
    expect(redactConfidential(cut)).toBe(cut);
    expect(Array.from(redactConfidential('😀'.repeat(150))).length).toBe(100 + Array.from(CONFIDENTIAL_SUFFIX).length);
  });
});
