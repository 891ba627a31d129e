// /api/admin histories, ragSearch and feedback through the real routes: scope by permission and twin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { buildRecord, retrievalEntry } from '../../../test/support/history-factories.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { insertMembership } from '../twins/twins.repo.js';
import { upsertFeedback } from './feedback.repo.js';
import type { HistoryRow } from './history.tables.js';

let t: TestApp;
let twinA: TwinRow;
let twinB: TwinRow;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
let recordA: HistoryRow;
let recordB: HistoryRow;

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  [twinA, twinB] = await Promise.all([buildTwin(db, { name: 'Twin A' }), buildTwin(db, { name: 'Twin B' })]);
  const people = {
    owner: await buildUser(db, { twin: twinA, fname: 'Olive', lname: 'Owner' }),
    neighbour: await buildUser(db, { twin: twinA }),
    reader: await buildUser(db, { twin: twinA, grants: ['histories.list', 'feedback.list'] }),
    adminA: await buildUser(db, { twin: twinA, role: 'admin' }),
    adminB: await buildUser(db, { twin: twinB, role: 'admin' }),
    userB: await buildUser(db, { twin: twinB }),
    // Admin of A by membership while working in B: the permission follows the record's twin.
    roaming: await buildUser(db, { twin: twinB }),
    super: await buildUser(db, { twin: null, accountType: 'super' }),
  };
  await insertMembership(db, { twinId: twinA.id, userId: people.roaming.user.id, role: 'admin' });
  for (const [name, built] of Object.entries(people)) {
    ids[name] = built.user.id;
    tokens[name] = await signIn(t.app, built.user.email);
  }
  recordA = await buildRecord(db, { twinId: twinA.id, userId: ids.owner, question: 'question in A', detail: { ragSearch: [retrievalEntry(), retrievalEntry({ chunkIndex: 3, confidential: true, chunkText: 'C'.repeat(300), length: 300 })] } });
  recordB = await buildRecord(db, { twinId: twinB.id, userId: ids.userB, question: 'question in B' });
});
afterAll(() => t.close());

const call = (method: 'GET' | 'POST', url: string, who: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers: { 'x-access-token': tokens[who] }, payload });

describe('GET /api/admin/history/{id}/ragSearch', () => {
  const ragSearch = (id: string, who: string) => call('GET', `/api/admin/history/${id}/ragSearch`, who);

  it('shows the owner their own entries, confidential ones cut to the preview', async () => {
    const response = await ragSearch(recordA.id, 'owner');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      success: true,
      ragSearch: [
        { uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkText: 'The moon is made of rock.', chunkIndex: 0, length: 25, score: 0.8, mode: 'RAG', confidential: false },
        { uploadId: 'a'.repeat(24), originalname: 'notes.md', chunkText: `${'C'.repeat(100)}… [confidential]`, chunkIndex: 3, length: 300, score: 0.8, mode: 'RAG', confidential: true },
      ],
    });
  });

  it('shows them to whoever holds histories.list on the record’s twin', async () => {
    for (const who of ['adminA', 'reader', 'roaming', 'super']) {
      const response = await ragSearch(recordA.id, who);
      expect(response.statusCode, who).toBe(200);
      expect(response.json().ragSearch).toHaveLength(2);
    }
  });

  it('refuses a member of the twin without histories.list with 403', async () => {
    const response = await ragSearch(recordA.id, 'neighbour');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ success: false, message: 'Not authorized' });
  });

  it('answers 404 to an admin of another twin, and for unknown or deleted records', async () => {
    const response = await ragSearch(recordA.id, 'adminB');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, message: 'History not found' });
    expect((await ragSearch(recordB.id, 'adminA')).statusCode).toBe(404);
    expect((await ragSearch('0'.repeat(24), 'super')).statusCode).toBe(404);
    expect((await ragSearch('nope', 'super')).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/admin/history/${recordA.id}/ragSearch` })).statusCode).toBe(401);
  });
});

describe('GET /api/admin/histories', () => {
  const list = async (who: string, query = '') => call('GET', `/api/admin/histories?limit=100${query}`, who);
  const questions = (body: { data: Array<{ question: string }> }) => body.data.map((item) => item.question);

  it('lists the records of the twins where the caller holds histories.list, in the list shape', async () => {
    const response = await list('adminA');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(questions(body)).toContain('question in A');
    expect(questions(body)).not.toContain('question in B');
    const item = body.data.find((entry: { _id: string }) => entry._id === recordA.id);
    expect(item).toMatchObject({ user: ids.owner, institution: twinA.id, userName: 'Olive Owner', institutionName: 'Twin A', hasRagSearch: true, ragSearchCount: 2, ragSearchMode: 'RAG' });
    expect(item).not.toHaveProperty('ragSearch');
    expect(item).not.toHaveProperty('toolCalls');
    expect(questions((await list('reader')).json())).toContain('question in A');
  });

  it('lets a super admin see every twin and filter by twin and person', async () => {
    expect(questions((await list('super')).json())).toEqual(expect.arrayContaining(['question in A', 'question in B']));
    expect(questions((await list('super', `&institutionId=${twinB.id}`)).json())).toEqual(['question in B']);
    expect(questions((await list('super', `&userId=${ids.owner}`)).json())).toEqual(['question in A']);
  });

  it('gives an empty page for a twin outside the caller’s scope, and 403 without the permission anywhere', async () => {
    expect((await list('adminA', `&institutionId=${twinB.id}`)).json()).toMatchObject({ data: [], total: 0 });
    const refused = await list('neighbour');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, message: 'Not authorized' });
  });
});

describe('POST /api/admin/histories/bulk-delete', () => {
  const bulkDelete = (who: string, list: string[]) => call('POST', '/api/admin/histories/bulk-delete', who, { ids: list });

  it('deletes only records in the caller’s twins and counts only what changed', async () => {
    const db = t.platform.database.db;
    const doomed = await buildRecord(db, { twinId: twinA.id, userId: ids.owner, question: 'doomed' });
    const foreign = await buildRecord(db, { twinId: twinB.id, userId: ids.userB, question: 'foreign' });
    const response = await bulkDelete('adminA', [doomed.id, foreign.id, '0'.repeat(24)]);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, changed: 1 });
    expect((await call('GET', `/api/user/history/${doomed.id}`, 'owner')).statusCode).toBe(404);
    expect((await call('GET', `/api/user/history/${foreign.id}`, 'userB')).statusCode).toBe(200);
    expect((await bulkDelete('adminA', [doomed.id])).json()).toEqual({ success: true, changed: 0 });
  });

  it('needs histories.delete: histories.list alone is refused', async () => {
    const kept = await buildRecord(t.platform.database.db, { twinId: twinA.id, userId: ids.owner });
    expect((await bulkDelete('reader', [kept.id])).statusCode).toBe(403);
    expect((await call('GET', `/api/user/history/${kept.id}`, 'owner')).statusCode).toBe(200);
  });

  it('refuses an empty list and malformed ids', async () => {
    expect((await bulkDelete('adminA', [])).statusCode).toBe(400);
    expect((await bulkDelete('adminA', ['nope'])).statusCode).toBe(400);
  });
});

describe('admin feedback', () => {
  let feedbackA: string;
  let feedbackB: string;

  beforeAll(async () => {
    const db = t.platform.database.db;
    const rated = await buildRecord(db, { twinId: twinA.id, userId: ids.owner, question: 'rated in A' });
    const response = await call('POST', `/api/user/history/${rated.id}/feedback`, 'owner', { rating: 'down', comment: 'Wrong' });
    expect(response.statusCode).toBe(200);
    const ratedB = await buildRecord(db, { twinId: twinB.id, userId: ids.userB, question: 'rated in B' });
    feedbackB = (await upsertFeedback(db, { twinId: twinB.id, historyId: ratedB.id, userId: ids.userB, rating: 'up', comment: '' })).id;
    const list = (await call('GET', '/api/admin/feedback', 'adminA')).json();
    feedbackA = list.data[0]._id;
  });

  it('lists the feedback of the caller’s twins with the rated question and answer', async () => {
    const response = await call('GET', '/api/admin/feedback', 'reader');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, page: 1, limit: 20, total: 1 });
    expect(response.json().data[0]).toMatchObject({
      _id: feedbackA,
      rating: 'down',
      comment: 'Wrong',
      user: ids.owner,
      userName: 'Olive Owner',
      institution: twinA.id,
      institutionName: 'Twin A',
      history: { question: 'rated in A', answer: 'You see the dentist at 10.', assistantName: 'Tutor' },
    });
    const superList = (await call('GET', '/api/admin/feedback?rating=up', 'super')).json();
    expect(superList.data.map((item: { _id: string }) => item._id)).toEqual([feedbackB]);
    expect((await call('GET', '/api/admin/feedback', 'neighbour')).statusCode).toBe(403);
  });

  it('bulk-deletes only feedback of the caller’s twins, with feedback.delete', async () => {
    expect((await call('POST', '/api/admin/feedback/bulk-delete', 'reader', { ids: [feedbackA] })).statusCode).toBe(403);
    const response = await call('POST', '/api/admin/feedback/bulk-delete', 'adminA', { ids: [feedbackA, feedbackB] });
    expect(response.json()).toEqual({ success: true, changed: 1 });
    const remaining = (await call('GET', '/api/admin/feedback', 'super')).json();
    expect(remaining.data.map((item: { _id: string }) => item._id)).toEqual([feedbackB]);
  });
});
