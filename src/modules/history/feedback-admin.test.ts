// GET, PUT and DELETE /api/admin/feedback/{id} through the real routes: twin scoping (another twin's
// row is 404), permissions (feedback.list to read, feedback.delete to triage or delete), validation,
// and a new rating by the person putting the row back to status 'new'.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { buildRecord } from '../../../test/support/history-factories.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { upsertFeedback } from './feedback.repo.js';
import type { HistoryRow } from './history.tables.js';

let t: TestApp;
let twinA: TwinRow;
let twinB: TwinRow;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
let recordA: HistoryRow;

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  [twinA, twinB] = await Promise.all([buildTwin(db, { name: 'Twin A' }), buildTwin(db, { name: 'Twin B' })]);
  const people = {
    owner: await buildUser(db, { twin: twinA, fname: 'Olive', lname: 'Owner' }),
    neighbour: await buildUser(db, { twin: twinA }),
    reader: await buildUser(db, { twin: twinA, grants: ['feedback.list'] }),
    adminA: await buildUser(db, { twin: twinA, role: 'admin' }),
    adminB: await buildUser(db, { twin: twinB, role: 'admin' }),
    userB: await buildUser(db, { twin: twinB }),
  };
  for (const [name, built] of Object.entries(people)) {
    ids[name] = built.user.id;
    tokens[name] = await signIn(t.app, built.user.email);
  }
  recordA = await buildRecord(db, { twinId: twinA.id, userId: ids.owner, question: 'rated in A' });
});
afterAll(() => t.close());

const call = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, who: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers: { 'x-access-token': tokens[who] }, payload });

async function feedbackIn(twin: TwinRow, userId: string, question: string): Promise<string> {
  const db = t.platform.database.db;
  const record = await buildRecord(db, { twinId: twin.id, userId, question });
  return (await upsertFeedback(db, { twinId: twin.id, historyId: record.id, userId, rating: 'up', comment: 'Nice' })).id;
}

describe('GET /api/admin/feedback/{id}', () => {
  it('shows a twin admin the row with its rated record, status and note', async () => {
    const rated = await call('POST', `/api/user/history/${recordA.id}/feedback`, 'owner', { rating: 'down', comment: 'Wrong' });
    expect(rated.statusCode).toBe(200);
    const id = (await call('GET', '/api/admin/feedback', 'adminA')).json().data[0]._id as string;
    for (const who of ['adminA', 'reader']) {
      const response = await call('GET', `/api/admin/feedback/${id}`, who);
      expect(response.statusCode, who).toBe(200);
      expect(response.json()).toEqual({
        success: true,
        data: {
          _id: id,
          history: { _id: recordA.id, conversationId: recordA.conversationId, question: 'rated in A', answer: recordA.answer, assistantName: recordA.assistantName },
          user: ids.owner,
          userEmail: expect.any(String),
          userName: 'Olive Owner',
          institution: twinA.id,
          institutionName: 'Twin A',
          rating: 'down',
          comment: 'Wrong',
          status: 'new',
          adminNote: '',
          created: expect.any(String),
          updated: expect.any(String),
        },
      });
    }
  });

  it('answers 404 Feedback not found for another twin’s row and unknown ids, 403 without feedback.list, 400 for a malformed id', async () => {
    const foreign = await feedbackIn(twinB, ids.userB, 'rated in B');
    const response = await call('GET', `/api/admin/feedback/${foreign}`, 'adminA');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, message: 'Feedback not found' });
    expect((await call('GET', `/api/admin/feedback/${'f'.repeat(24)}`, 'adminA')).statusCode).toBe(404);
    expect((await call('GET', `/api/admin/feedback/${foreign}`, 'adminB')).statusCode).toBe(200);
    const own = await feedbackIn(twinA, ids.owner, 'another in A');
    const refused = await call('GET', `/api/admin/feedback/${own}`, 'neighbour');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, message: 'Not authorized' });
    const malformed = await call('GET', '/api/admin/feedback/not-an-id', 'adminA');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ success: false });
  });
});

describe('PUT /api/admin/feedback/{id}', () => {
  it('lets a twin admin set status and note, ignores unknown keys, and shows both in the list', async () => {
    const id = await feedbackIn(twinA, ids.owner, 'to triage');
    const response = await call('PUT', `/api/admin/feedback/${id}`, 'adminA', { status: 'reviewed', adminNote: '  Fixed the source  ', rating: 'down', comment: 'hacked' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, data: { _id: id, status: 'reviewed', adminNote: 'Fixed the source', rating: 'up', comment: 'Nice' } });
    const listed = (await call('GET', '/api/admin/feedback', 'adminA')).json().data.find((item: { _id: string }) => item._id === id);
    expect(listed).toMatchObject({ status: 'reviewed', adminNote: 'Fixed the source' });
    const noteOnly = await call('PUT', `/api/admin/feedback/${id}`, 'adminA', { adminNote: 'Second look' });
    expect(noteOnly.json().data).toMatchObject({ status: 'reviewed', adminNote: 'Second look' });
  });

  it('puts the row back to new when the person rates again, keeping the note', async () => {
    const record = await buildRecord(t.platform.database.db, { twinId: twinA.id, userId: ids.owner, question: 'rated twice' });
    await call('POST', `/api/user/history/${record.id}/feedback`, 'owner', { rating: 'down' });
    const id = (await call('GET', '/api/admin/feedback', 'adminA')).json().data.find((item: { history: { _id: string } }) => item.history._id === record.id)._id;
    await call('PUT', `/api/admin/feedback/${id}`, 'adminA', { status: 'reviewed', adminNote: 'Seen' });
    await call('POST', `/api/user/history/${record.id}/feedback`, 'owner', { rating: 'down', comment: 'Still wrong' });
    const after = (await call('GET', `/api/admin/feedback/${id}`, 'adminA')).json().data;
    expect(after).toMatchObject({ status: 'new', adminNote: 'Seen', comment: 'Still wrong' });
  });

  it('refuses a status outside the enum, a note over 2000 characters and a malformed id with 400', async () => {
    const id = await feedbackIn(twinA, ids.owner, 'validation');
    const bad = await call('PUT', `/api/admin/feedback/${id}`, 'adminA', { status: 'done' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ success: false });
    expect((await call('PUT', `/api/admin/feedback/${id}`, 'adminA', { adminNote: 'x'.repeat(2001) })).statusCode).toBe(400);
    expect((await call('PUT', `/api/admin/feedback/${id}`, 'adminA', { adminNote: 'x'.repeat(2000) })).statusCode).toBe(200);
    expect((await call('PUT', '/api/admin/feedback/123', 'adminA', { status: 'reviewed' })).statusCode).toBe(400);
  });

  it('answers 404 for another twin’s row and 403 to a member without feedback.delete', async () => {
    const foreign = await feedbackIn(twinB, ids.userB, 'foreign triage');
    const response = await call('PUT', `/api/admin/feedback/${foreign}`, 'adminA', { status: 'reviewed' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, message: 'Feedback not found' });
    expect((await call('GET', `/api/admin/feedback/${foreign}`, 'adminB')).json().data.status).toBe('new');
    const own = await feedbackIn(twinA, ids.owner, 'reader triage');
    for (const who of ['reader', 'neighbour']) {
      const refused = await call('PUT', `/api/admin/feedback/${own}`, who, { status: 'reviewed' });
      expect(refused.statusCode, who).toBe(403);
      expect(refused.json()).toMatchObject({ success: false, message: 'Not authorized' });
    }
    expect((await call('GET', `/api/admin/feedback/${own}`, 'adminA')).json().data.status).toBe('new');
  });
});

describe('DELETE /api/admin/feedback/{id}', () => {
  it('deletes a row of the admin’s twin; the record stays', async () => {
    const record = await buildRecord(t.platform.database.db, { twinId: twinA.id, userId: ids.owner, question: 'to delete' });
    await call('POST', `/api/user/history/${record.id}/feedback`, 'owner', { rating: 'up' });
    const id = (await call('GET', '/api/admin/feedback', 'adminA')).json().data.find((item: { history: { _id: string } }) => item.history._id === record.id)._id;
    const response = await call('DELETE', `/api/admin/feedback/${id}`, 'adminA');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, message: 'Feedback deleted' });
    expect((await call('GET', `/api/admin/feedback/${id}`, 'adminA')).statusCode).toBe(404);
    expect((await call('DELETE', `/api/admin/feedback/${id}`, 'adminA')).statusCode).toBe(404);
    const kept = await call('GET', `/api/user/history/${record.id}`, 'owner');
    expect(kept.statusCode).toBe(200);
    expect(kept.json().data.feedback).toBeNull();
  });

  it('answers 404 for another twin’s row, 403 without feedback.delete, 400 for a malformed id', async () => {
    const foreign = await feedbackIn(twinB, ids.userB, 'foreign delete');
    const response = await call('DELETE', `/api/admin/feedback/${foreign}`, 'adminA');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, message: 'Feedback not found' });
    expect((await call('GET', `/api/admin/feedback/${foreign}`, 'adminB')).statusCode).toBe(200);
    const own = await feedbackIn(twinA, ids.owner, 'reader delete');
    expect((await call('DELETE', `/api/admin/feedback/${own}`, 'reader')).statusCode).toBe(403);
    expect((await call('GET', `/api/admin/feedback/${own}`, 'adminA')).statusCode).toBe(200);
    expect((await call('DELETE', '/api/admin/feedback/xyz', 'adminA')).statusCode).toBe(400);
  });
});
