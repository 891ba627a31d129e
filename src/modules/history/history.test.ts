// /api/user/history through the real routes: list vs detail shapes, ownership, delete and feedback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { buildRecord } from '../../../test/support/history-factories.js';
import { insertMembership } from '../twins/twins.repo.js';
import { startRecord } from '../conversations/turn-record.repo.js';
import type { HistoryRow } from './history.tables.js';

let t: TestApp;
let person: BuiltUser;
let neighbour: BuiltUser;
let token: string;
let neighbourToken: string;

beforeAll(async () => {
  t = await startTestApp();
  person = await buildUser(t.platform.database.db);
  neighbour = await buildUser(t.platform.database.db, { twin: person.twin });
  [token, neighbourToken] = await Promise.all([signIn(t.app, person.user.email), signIn(t.app, neighbour.user.email)]);
});
afterAll(() => t.close());

const db = () => t.platform.database.db;
const twin = () => person.twin!.id;
const as = (who: string) => ({ 'x-access-token': who });
const get = (url: string, who = token) => t.app.inject({ method: 'GET', url, headers: as(who) });

describe('GET /api/user/history', () => {
  let first: HistoryRow;
  let second: HistoryRow;
  let elsewhere: HistoryRow;

  beforeAll(async () => {
    first = await buildRecord(db(), { twinId: twin(), userId: person.user.id, question: 'first', at: new Date('2031-05-01T10:00:00Z') });
    second = await buildRecord(db(), { twinId: twin(), userId: person.user.id, question: 'second', conversationId: first.conversationId, at: new Date('2031-05-01T11:00:00Z') });
    await buildRecord(db(), { twinId: twin(), userId: person.user.id, question: 'another conversation', at: new Date('2031-05-02T10:00:00Z'), detail: { ragSearch: [] } });
    await buildRecord(db(), { twinId: twin(), userId: neighbour.user.id, question: 'neighbour' });
    // The person's record in another twin they belong to: not part of this twin's history.
    const other = await buildTwin(db());
    await insertMembership(db(), { twinId: other.id, userId: person.user.id, role: 'user' });
    elsewhere = await buildRecord(db(), { twinId: other.id, userId: person.user.id, question: 'other twin' });
  });

  it('lists my records of the current twin, newest first, without the working detail', async () => {
    const response = await get('/api/user/history');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ success: true, page: 1, limit: 20 });
    const questions = body.data.map((item: { question: string }) => item.question);
    expect(questions.slice(0, 3)).toEqual(['another conversation', 'second', 'first']);
    expect(questions).not.toContain('neighbour');
    expect(questions).not.toContain('other twin');
    expect(body.total).toBe(body.data.length);

    const item = body.data.find((entry: { _id: string }) => entry._id === second.id);
    expect(item).toEqual({
      _id: second.id,
      conversationId: first.conversationId,
      user: person.user.id,
      institution: twin(),
      assistant: { _id: 'c'.repeat(24), name: 'Tutor' },
      question: 'second',
      answer: 'You see the dentist at 10.',
      status: 'complete',
      mode: 'chat',
      models: ['gpt-4o'],
      usage: { inputTokens: 100, outputTokens: 20, reasoningTokens: 0, totalTokens: 120 },
      credits: 0.75,
      toolCallCount: 1,
      subagentCount: 1,
      memoryCount: 1,
      hasReasoning: true,
      hasRagSearch: true,
      ragSearchCount: 2,
      ragSearchMode: 'RAG',
      detailsExpired: false,
      detailsExpiredAt: null,
      detailsNotice: null,
      feedback: null,
      created: '2031-05-01T11:00:00.000Z',
      completed: '2031-05-01T11:00:00.000Z',
    });
    for (const key of ['ragSearch', 'toolCalls', 'subagents', 'memories', 'reasoning']) expect(item).not.toHaveProperty(key);
    const withoutRetrieval = body.data.find((entry: { question: string }) => entry.question === 'another conversation');
    expect(withoutRetrieval).toMatchObject({ hasRagSearch: false, ragSearchCount: 0, ragSearchMode: null });
  });

  it('filters by conversation and pages', async () => {
    const conversation = await get(`/api/user/history?conversationId=${first.conversationId}`);
    expect(conversation.json().data.map((item: { _id: string }) => item._id)).toEqual([second.id, first.id]);
    expect(conversation.json().total).toBe(2);

    const paged = await get(`/api/user/history?conversationId=${first.conversationId}&page=2&limit=1`);
    expect(paged.json()).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(paged.json().data.map((item: { _id: string }) => item._id)).toEqual([first.id]);

    const notMine = await get(`/api/user/history?conversationId=${first.conversationId}`, neighbourToken);
    expect(notMine.json()).toMatchObject({ data: [], total: 0 });
  });

  it('refuses a malformed conversation id and a limit above 100', async () => {
    expect((await get('/api/user/history?conversationId=nope')).statusCode).toBe(400);
    expect((await get('/api/user/history?limit=101')).statusCode).toBe(400);
  });

  it('needs a session', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/user/history' })).statusCode).toBe(401);
  });

  it('does not show a record of another twin by id either', async () => {
    expect((await get(`/api/user/history/${elsewhere.id}`)).statusCode).toBe(404);
  });
});

describe('GET /api/user/history/{id}', () => {
  it('returns the record with its working detail', async () => {
    const record = await buildRecord(db(), { twinId: twin(), userId: person.user.id });
    const response = await get(`/api/user/history/${record.id}`);
    expect(response.statusCode).toBe(200);
    const { data } = response.json();
    expect(data).toMatchObject({ _id: record.id, hasRagSearch: true, ragSearchCount: 2, ragSearchMode: 'RAG', error: null, reasoning: 'The user wants their schedule.' });
    expect(data.ragSearch).toEqual([
      { uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkText: 'The moon is made of rock.', chunkIndex: 0, length: 25, score: 0.8, mode: 'RAG', confidential: false },
      { uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkText: 'It orbits the earth.', chunkIndex: 1, length: 25, score: 0.8, mode: 'RAG', confidential: false },
    ]);
    expect(data.toolCalls).toEqual([
      { id: 't1', server: 'calendar', tool: 'list_events', arguments: { day: 'today' }, result: 'Dentist at 10', status: 'ok', approval: { decision: 'approve', decidedAt: '2030-01-01T00:00:00.000Z' } },
    ]);
    expect(data.subagents[0].transcript).toEqual([{ role: 'user', content: 'find it' }, { role: 'assistant', content: 'Dr. Smile' }]);
    expect(data.memories).toEqual([{ key: 'name', value: 'Ada', shared: false }]);
  });

  it('shows a record still streaming', async () => {
    const streaming = await startRecord(db(), { twinId: twin(), userId: person.user.id, question: 'in flight' });
    const { data } = (await get(`/api/user/history/${streaming.id}`)).json();
    expect(data).toMatchObject({ status: 'streaming', answer: '', completed: null, ragSearch: [], hasRagSearch: false });
  });

  it("answers 404 for another person's record in the same twin, an unknown id, and 400 for a malformed one", async () => {
    const theirs = await buildRecord(db(), { twinId: twin(), userId: neighbour.user.id });
    const response = await get(`/api/user/history/${theirs.id}`);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, message: 'History not found' });
    expect((await get(`/api/user/history/${'0'.repeat(24)}`)).statusCode).toBe(404);
    expect((await get('/api/user/history/not-an-id')).statusCode).toBe(400);
  });
});

describe('DELETE /api/user/history/{id}', () => {
  it('removes my record from every view', async () => {
    const record = await buildRecord(db(), { twinId: twin(), userId: person.user.id, question: 'forget me' });
    const response = await t.app.inject({ method: 'DELETE', url: `/api/user/history/${record.id}`, headers: as(token) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, message: 'History deleted' });
    expect((await get(`/api/user/history/${record.id}`)).statusCode).toBe(404);
    const list = (await get('/api/user/history?limit=100')).json();
    expect(list.data.map((item: { _id: string }) => item._id)).not.toContain(record.id);
    const again = await t.app.inject({ method: 'DELETE', url: `/api/user/history/${record.id}`, headers: as(token) });
    expect(again.statusCode).toBe(404);
  });

  it("cannot delete another person's record", async () => {
    const theirs = await buildRecord(db(), { twinId: twin(), userId: neighbour.user.id });
    const response = await t.app.inject({ method: 'DELETE', url: `/api/user/history/${theirs.id}`, headers: as(token) });
    expect(response.statusCode).toBe(404);
    expect((await get(`/api/user/history/${theirs.id}`, neighbourToken)).statusCode).toBe(200);
  });
});

describe('POST /api/user/history/{id}/feedback', () => {
  const rate = (id: string, payload: Record<string, unknown>, who = token) => t.app.inject({ method: 'POST', url: `/api/user/history/${id}/feedback`, headers: as(who), payload });

  it('records a rating, replaces it on a second post, and shows it on the record', async () => {
    const record = await buildRecord(db(), { twinId: twin(), userId: person.user.id });
    const up = await rate(record.id, { rating: 'up' });
    expect(up.statusCode).toBe(200);
    expect(up.json().data).toMatchObject({ rating: 'up', comment: '' });

    const down = await rate(record.id, { rating: 'down', comment: '  Wrong dentist.  ' });
    expect(down.json().data).toMatchObject({ rating: 'down', comment: 'Wrong dentist.' });
    expect((await get(`/api/user/history/${record.id}`)).json().data.feedback).toEqual({ rating: 'down', comment: 'Wrong dentist.' });
    const item = (await get(`/api/user/history?conversationId=${record.conversationId}`)).json().data[0];
    expect(item.feedback).toEqual({ rating: 'down', comment: 'Wrong dentist.' });
  });

  it('refuses a rating outside up/down and a comment over 2000 characters', async () => {
    const record = await buildRecord(db(), { twinId: twin(), userId: person.user.id });
    const sideways = await rate(record.id, { rating: 'sideways' });
    expect(sideways.statusCode).toBe(400);
    expect(sideways.json().error.field).toBe('body.rating');
    expect((await rate(record.id, { rating: 'up', comment: 'x'.repeat(2001) })).statusCode).toBe(400);
  });

  it("answers 404 on another person's record", async () => {
    const theirs = await buildRecord(db(), { twinId: twin(), userId: neighbour.user.id });
    expect((await rate(theirs.id, { rating: 'down' })).statusCode).toBe(404);
  });
});
