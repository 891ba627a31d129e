// Behaviour 4: working detail expires 180 days after the conversation; counts and the exchange stay.
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { buildRecord } from '../../../test/support/history-factories.js';
import { scheduleJobs } from '../../jobs.js';
import { DETAILS_EXPIRED_TEXT } from './history.detail.js';
import { RETENTION_CRON, RETENTION_JOB } from './history.jobs.js';
import { expireWorkingDetail } from './history.retention.js';
import { history, type HistoryRow } from './history.tables.js';

const DAY = 86_400_000;
const M = DETAILS_EXPIRED_TEXT;
let t: TestApp;
let person: BuiltUser;
let token: string;

beforeAll(async () => {
  t = await startTestApp({ workers: true });
  person = await buildUser(t.platform.database.db);
  token = await signIn(t.app, person.user.email);
});
afterAll(() => t.close());

const db = () => t.platform.database.db;
const daysBefore = (now: Date, days: number) => new Date(now.getTime() - days * DAY);
const record = (at: Date, conversationId?: string) => buildRecord(db(), { twinId: person.twin!.id, userId: person.user.id, at, conversationId });
const load = async (id: string): Promise<HistoryRow> => (await db().select().from(history).where(eq(history.id, id)))[0];
const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-access-token': token } });
/** Expire everything that is due, so each test starts from a clean slate. */
const settle = (now: Date) => expireWorkingDetail(db(), now, 1000);

describe('expireWorkingDetail', () => {
  it('expires a record 181 days back and leaves one 179 days back alone', async () => {
    const now = new Date('2032-06-01T12:00:00Z');
    await settle(now);
    const old = await record(daysBefore(now, 181));
    const recent = await record(daysBefore(now, 179));
    const recentBefore = await load(recent.id);

    expect(await expireWorkingDetail(db(), now, 100)).toBe(1);

    const expired = await load(old.id);
    expect(expired.detailsExpiredAt?.toISOString()).toBe(now.toISOString());
    expect(expired.toolCalls).toEqual([
      { id: 't1', server: 'calendar', tool: 'list_events', arguments: M, result: M, status: 'ok', approval: { decision: 'approve', decidedAt: '2030-01-01T00:00:00.000Z' } },
    ]);
    expect(expired.subagents).toEqual([
      { id: 's1', name: 'researcher', task: M, transcript: [{ role: 'user', content: M }, { role: 'assistant', content: M }], status: 'complete', steps: 2, failedSteps: 0 },
    ]);
    expect(expired.ragSearch.map((entry) => entry.chunkText)).toEqual([M, M]);
    expect(expired.ragSearch[1]).toMatchObject({ uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkIndex: 1, length: 25, score: 0.8, mode: 'RAG', confidential: false });
    expect(expired.memories).toEqual([{ key: 'name', value: M, shared: false }]);
    expect(expired.reasoning).toBe(M);
    // Kept: the exchange, models, usage, credits and every count.
    expect(expired).toMatchObject({
      question: old.question,
      answer: old.answer,
      models: ['gpt-4o'],
      inputTokens: 100,
      outputTokens: 20,
      credits: 0.75,
      toolCallCount: 1,
      subagentCount: 1,
      ragSearchCount: 2,
      memoryCount: 1,
      ragSearchMode: 'RAG',
    });

    expect(await load(recent.id)).toEqual(recentBefore);
  });

  it('shows expired rows with the notice in the detail, the list and the admin ragSearch route', async () => {
    const now = new Date();
    await settle(now);
    const old = await record(daysBefore(now, 181));
    await settle(now);

    const detail = (await get(`/api/user/history/${old.id}`)).json().data;
    expect(detail).toMatchObject({ detailsExpired: true, detailsNotice: M, reasoning: M, toolCallCount: 1, ragSearchCount: 2, hasRagSearch: true, memoryCount: 1 });
    expect(detail.ragSearch.map((entry: { chunkText: string }) => entry.chunkText)).toEqual([M, M]);
    const item = (await get(`/api/user/history?conversationId=${old.conversationId}`)).json().data[0];
    expect(item).toMatchObject({ _id: old.id, detailsExpired: true, detailsNotice: M, hasRagSearch: true, ragSearchCount: 2, ragSearchMode: 'RAG', hasReasoning: true });
    const rag = (await get(`/api/admin/history/${old.id}/ragSearch`)).json();
    expect(rag.ragSearch.map((entry: { chunkText: string }) => entry.chunkText)).toEqual([M, M]);
  });

  it('changes nothing when run a second time', async () => {
    const now = new Date('2032-07-01T00:00:00Z');
    await settle(now);
    const old = await record(daysBefore(now, 200));
    expect(await expireWorkingDetail(db(), now, 100)).toBe(1);
    const once = await load(old.id);
    expect(await expireWorkingDetail(db(), now, 100)).toBe(0);
    expect(await expireWorkingDetail(db(), new Date(now.getTime() + DAY), 100)).toBe(0);
    expect(await load(old.id)).toEqual(once);
  });

  it('measures from the conversation’s last activity: old records of a live conversation wait for it', async () => {
    const now = new Date('2032-08-01T00:00:00Z');
    await settle(now);
    const first = await record(daysBefore(now, 181));
    const latest = await record(daysBefore(now, 10), first.conversationId);

    expect(await expireWorkingDetail(db(), now, 100)).toBe(0);
    expect((await load(first.id)).detailsExpiredAt).toBeNull();

    // 180 days after the last turn, the whole conversation expires together.
    const later = new Date(now.getTime() + 171 * DAY);
    expect(await expireWorkingDetail(db(), later, 100)).toBe(2);
    expect((await load(first.id)).detailsExpiredAt).not.toBeNull();
    expect((await load(latest.id)).detailsExpiredAt).not.toBeNull();
  });

  it('works in batches, and two workers at once expire each row exactly once', async () => {
    const now = new Date('2032-09-01T00:00:00Z');
    await settle(now);
    const due = await Promise.all(Array.from({ length: 9 }, (_, index) => record(daysBefore(now, 181 + index))));
    const [a, b] = await Promise.all([expireWorkingDetail(db(), now, 2), expireWorkingDetail(db(), now, 2)]);
    expect(a + b).toBe(9);
    const rows = await db().select({ expiredAt: history.detailsExpiredAt }).from(history).where(inArray(history.id, due.map((row) => row.id)));
    expect(rows.every((row) => row.expiredAt?.getTime() === now.getTime())).toBe(true);
  });
});

describe(`the ${RETENTION_JOB} job`, () => {
  it('runs through the real queue', async () => {
    const old = await record(daysBefore(new Date(), 181));
    const recent = await record(daysBefore(new Date(), 179));
    await t.platform.jobs.send(RETENTION_JOB, {});
    await t.platform.jobs.drain(RETENTION_JOB, 20_000);
    expect((await load(old.id)).detailsExpiredAt).not.toBeNull();
    expect((await load(recent.id)).detailsExpiredAt).toBeNull();
  });

  it('refuses a malformed payload', async () => {
    await expect(t.platform.jobs.send(RETENTION_JOB, { batchSize: 0 })).rejects.toThrow();
  });

  it('is scheduled daily', async () => {
    await scheduleJobs(t.platform.jobs, t.platform.database);
    const { rows } = await t.platform.database.executeSql('select cron, timezone from pgboss.schedule where name = $1', [RETENTION_JOB]);
    expect(rows).toEqual([{ cron: RETENTION_CRON, timezone: 'UTC' }]);
  });
});
