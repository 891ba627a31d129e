// Suggested questions through the real routes: twin admins manage their twin's, another twin's answer
// 404, a member sees only GET /api/user/questions, and the public branding lists them in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { insertAssistant } from '../assistants/assistants.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
const token = {} as Record<'super' | 'adminA' | 'adminB' | 'plain' | 'lister', string>;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db());
  twinB = await buildTwin(db());
  token.super = await signIn(t.app, (await buildUser(db(), { twin: twinB, accountType: 'super' })).user.email);
  token.adminA = await signIn(t.app, (await buildUser(db(), { twin: twinA, role: 'admin' })).user.email);
  token.adminB = await signIn(t.app, (await buildUser(db(), { twin: twinB, role: 'admin' })).user.email);
  token.plain = await signIn(t.app, (await buildUser(db(), { twin: twinA })).user.email);
  token.lister = await signIn(t.app, (await buildUser(db(), { twin: twinA, grants: ['questions.list'] })).user.email);
});
afterAll(() => t.close());

const add = (who: string, body: Record<string, unknown>) => req(who, 'POST', '/api/admin/question', body);

describe('suggested questions', () => {
  it('a twin admin adds, edits, reorders and deletes; people and the branding see them in order', async () => {
    const first = await add(token.adminA, { text: 'What can you do?', order: 2 });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ institution: twinA.id, text: 'What can you do?', order: 2, assistantId: null });
    const second = await add(token.adminA, { text: 'When is the exam?', order: 1 });
    const edited = await req(token.adminA, 'PUT', `/api/admin/question/${first.body.data._id}`, { text: 'What can you do for me?' });
    expect(edited.body.data).toMatchObject({ text: 'What can you do for me?', order: 2 });

    const mine = await req(token.plain, 'GET', '/api/user/questions');
    expect(mine.body).toEqual({
      success: true,
      data: [
        { _id: second.body.data._id, text: 'When is the exam?', assistantId: null, order: 1 },
        { _id: first.body.data._id, text: 'What can you do for me?', assistantId: null, order: 2 },
      ],
    });
    const branding = await req(null, 'POST', '/api/agent/branding', { publicId: twinA.publicId });
    expect(branding.body.questions).toEqual([
      { text: 'When is the exam?', assistantId: null },
      { text: 'What can you do for me?', assistantId: null },
    ]);
    expect((await req(token.adminB, 'GET', '/api/user/questions')).body.data).toEqual([]);

    expect((await req(token.adminA, 'DELETE', `/api/admin/question/${second.body.data._id}`)).body).toEqual({ success: true, message: 'Question deleted' });
    expect((await req(token.plain, 'GET', '/api/user/questions')).body.data.map((q: { text: string }) => q.text)).toEqual(['What can you do for me?']);
  });

  it("answers another twin's question as not found, and lists only the admin's twins", async () => {
    const theirs = (await add(token.adminB, { text: 'B only' })).body.data._id;
    for (const [method, body] of [['GET'], ['PUT', { text: 'mine now' }], ['DELETE']] as const) {
      const answer = await req(token.adminA, method, `/api/admin/question/${theirs}`, body);
      expect(answer).toMatchObject({ status: 404, body: { success: false, code: 'QUESTION_NOT_FOUND' } });
    }
    expect((await add(token.adminA, { text: 'Into B', institution: twinB.id })).status).toBe(404);
    expect((await req(token.adminA, 'POST', '/api/admin/questions/bulk-delete', { ids: [theirs] })).body).toEqual({ success: true, changed: 0 });
    const listed = await req(token.adminA, 'GET', '/api/admin/questions');
    expect(listed.body.data.every((q: { institution: string }) => q.institution === twinA.id)).toBe(true);
    expect((await req(token.adminA, 'GET', `/api/admin/questions?institution=${twinB.id}`)).body.total).toBe(0);
    expect((await req(token.super, 'GET', `/api/admin/questions?institution=${twinB.id}&search=only`)).body.data).toMatchObject([{ _id: theirs }]);
    expect((await req(token.super, 'GET', `/api/admin/question/${theirs}`)).status).toBe(200);
  });

  it('a plain user may not administer; questions.list alone reads but does not change', async () => {
    const id = (await add(token.adminA, { text: 'Read me' })).body.data._id;
    expect((await req(token.plain, 'GET', '/api/admin/questions')).status).toBe(403);
    expect((await req(token.plain, 'GET', `/api/admin/question/${id}`)).status).toBe(404);
    expect((await add(token.plain, { text: 'Sneaky' })).status).toBe(403);
    expect((await req(token.plain, 'POST', '/api/admin/questions/bulk-delete', { ids: [id] })).status).toBe(403);
    expect((await req(token.lister, 'GET', `/api/admin/question/${id}`)).body.data.text).toBe('Read me');
    expect((await req(token.lister, 'PUT', `/api/admin/question/${id}`, { text: 'changed' })).status).toBe(403);
    expect((await req(token.lister, 'DELETE', `/api/admin/question/${id}`)).status).toBe(403);
  });

  it("refuses bad input at the field: empty text, another twin's assistant, a bad id", async () => {
    const empty = await add(token.adminA, { text: '  ' });
    expect(empty).toMatchObject({ status: 400, body: { success: false, code: 'VALIDATION_FAILED', error: { field: 'body.text' } } });
    const elsewhere = await insertAssistant(db(), { name: 'B helper', twinId: twinB.id });
    const wrong = await add(token.adminA, { text: 'Ask B', assistantId: elsewhere.id });
    expect(wrong).toMatchObject({ status: 400, body: { code: 'INVALID_ASSISTANT', error: { field: 'body.assistantId' } } });
    const own = await insertAssistant(db(), { name: 'A helper', twinId: twinA.id });
    expect((await add(token.adminA, { text: 'Ask A', assistantId: own.id })).body.data.assistantId).toBe(own.id);
    expect((await add(token.adminA, { text: 'x', order: 1.5 })).status).toBe(400);
    expect((await req(token.adminA, 'PUT', '/api/admin/question/nope', { text: 'x' })).status).toBe(400);
    const noTwin = await signIn(t.app, (await buildUser(db(), { twin: null, accountType: 'super' })).user.email);
    expect((await add(noTwin, { text: 'Where?' })).body).toMatchObject({ code: 'INSTITUTION_REQUIRED', error: { field: 'body.institution' } });
  });

  it('bulk delete reports how many changed within the twins the admin manages', async () => {
    const mine = [(await add(token.adminA, { text: 'one' })).body.data._id, (await add(token.adminA, { text: 'two' })).body.data._id];
    const theirs = (await add(token.adminB, { text: 'three' })).body.data._id;
    expect((await req(token.adminA, 'POST', '/api/admin/questions/bulk-delete', { ids: [...mine, theirs] })).body).toEqual({ success: true, changed: 2 });
    expect((await req(token.super, 'POST', '/api/admin/questions/bulk-delete', { ids: [theirs] })).body).toEqual({ success: true, changed: 1 });
  });
});
