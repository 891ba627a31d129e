// The admin assistants family: lists across the caller's twins only, edits (restoring deleted ones),
// and bulk delete that counts only what the caller may delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildAssistant } from '../../../test/support/assistants.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { insertMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findAssistantById, findStandardAssistant } from './assistants.repo.js';
import type { AssistantRow } from './assistants.tables.js';

let t: TestApp;
let t1: TwinRow;
let t2: TwinRow;
let t3: TwinRow;
const tok = {} as Record<'admin' | 'lister' | 'member' | 'super', string>;
let memberId: string;
const a = {} as Record<'t1Private' | 't1Deleted' | 't2Unpublished' | 't3Shared' | 'personal', AssistantRow>;

const as = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-access-token': token }, payload });
const idsOf = (body: { data: { _id: string }[] }) => body.data.map((row) => row._id);

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  [t1, t2, t3] = [await buildTwin(db), await buildTwin(db), await buildTwin(db)];
  const admin = await buildUser(db, { twin: t1, role: 'admin' });
  await insertMembership(db, { twinId: t2.id, userId: admin.user.id, role: 'admin' });
  const lister = await buildUser(db, { twin: t1, grants: ['assistants.list'] });
  const member = await buildUser(db, { twin: t1 });
  memberId = member.user.id;
  const boss = await buildUser(db, { twin: t3, accountType: 'super' });
  tok.admin = await signIn(t.app, admin.user.email);
  tok.lister = await signIn(t.app, lister.user.email);
  tok.member = await signIn(t.app, member.user.email);
  tok.super = await signIn(t.app, boss.user.email);
  a.t1Private = await buildAssistant(db, { userId: memberId, twinId: t1.id, name: 'Alpha private' });
  a.t1Deleted = await buildAssistant(db, { userId: memberId, twinId: t1.id, status: 'deleted', name: 'Beta deleted' });
  a.t2Unpublished = await buildAssistant(db, { userId: admin.user.id, twinId: t2.id, status: 'unpublished', name: 'Gamma' });
  a.t3Shared = await buildAssistant(db, { userId: boss.user.id, twinId: t3.id, twinShared: true, name: 'Delta' });
  a.personal = await buildAssistant(db, { userId: memberId, name: 'Epsilon personal' });
});
afterAll(() => t.close());

describe('GET /api/admin/assistants', () => {
  it("lists every status across the admin's twins, and nothing else", async () => {
    const response = await as(tok.admin, 'GET', '/api/admin/assistants?limit=100');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(idsOf(body).sort()).toEqual([a.t1Private.id, a.t1Deleted.id, a.t2Unpublished.id].sort());
    expect(body).toMatchObject({ success: true, page: 1, limit: 100, total: 3 });
    expect(body.data.every((row: { canEdit: boolean }) => row.canEdit)).toBe(true);
  });

  it('filters by status, twin and search, and paginates', async () => {
    expect(idsOf((await as(tok.admin, 'GET', '/api/admin/assistants?status=deleted')).json())).toEqual([a.t1Deleted.id]);
    expect(idsOf((await as(tok.admin, 'GET', `/api/admin/assistants?institution=${t2.id}`)).json())).toEqual([a.t2Unpublished.id]);
    expect(idsOf((await as(tok.admin, 'GET', '/api/admin/assistants?search=alpha')).json())).toEqual([a.t1Private.id]);
    const page2 = (await as(tok.admin, 'GET', '/api/admin/assistants?limit=2&page=2')).json();
    expect(page2.data).toHaveLength(1);
    expect(page2.total).toBe(3);
  });

  it('shows a holder of assistants.list only their twin, read-only; refuses a plain member', async () => {
    const body = (await as(tok.lister, 'GET', '/api/admin/assistants')).json();
    expect(idsOf(body).sort()).toEqual([a.t1Private.id, a.t1Deleted.id].sort());
    expect(body.data.every((row: { canEdit: boolean }) => !row.canEdit)).toBe(true);
    expect((await as(tok.lister, 'PUT', `/api/admin/assistant/${a.t1Private.id}`, { name: 'X' })).statusCode).toBe(403);
    expect((await as(tok.member, 'GET', '/api/admin/assistants')).statusCode).toBe(403);
  });

  it('shows a super admin every assistant, system and personal ones included', async () => {
    const all = idsOf((await as(tok.super, 'GET', '/api/admin/assistants?limit=100')).json());
    const standard = (await findStandardAssistant(t.platform.database.db))!;
    expect(all).toEqual(expect.arrayContaining([a.t3Shared.id, a.personal.id, standard.id, a.t1Private.id]));
  });
});

describe('GET and PUT /api/admin/assistant/{id}', () => {
  it('reads and restores a deleted assistant of its twin', async () => {
    const seen = await as(tok.admin, 'GET', `/api/admin/assistant/${a.t1Deleted.id}`);
    expect(seen.json().data).toMatchObject({ status: 'deleted', name: 'Beta deleted' });
    const restored = await as(tok.admin, 'PUT', `/api/admin/assistant/${a.t1Deleted.id}`, { status: 'active' });
    expect(restored.json()).toMatchObject({ success: true, scope: 'user' });
    expect((await findAssistantById(t.platform.database.db, a.t1Deleted.id))!.status).toBe('active');
  });

  it("answers 404 for another twin's assistant and applies the update rules", async () => {
    expect((await as(tok.admin, 'GET', `/api/admin/assistant/${a.t3Shared.id}`)).statusCode).toBe(404);
    const foreign = await as(tok.admin, 'PUT', `/api/admin/assistant/${a.t3Shared.id}`, { name: 'X' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('Assistant not found!');
    const bad = await as(tok.admin, 'PUT', `/api/admin/assistant/${a.t1Private.id}`, { assistantToolMode: 'wild' });
    expect(bad.json()).toMatchObject({ success: false, message: 'Invalid Properties' });
    const shared = await as(tok.admin, 'PUT', `/api/admin/assistant/${a.t1Private.id}`, { institution_shared: true });
    expect(shared.json()).toMatchObject({ scope: 'institution', sharingDropped: false });
  });
});

describe('POST /api/admin/assistants/bulk-delete', () => {
  it("deletes only within the admin's twins and counts what changed", async () => {
    const db = t.platform.database.db;
    const mine = [await buildAssistant(db, { userId: memberId, twinId: t1.id }), await buildAssistant(db, { userId: memberId, twinId: t2.id })];
    const standard = (await findStandardAssistant(db))!;
    const response = await as(tok.admin, 'POST', '/api/admin/assistants/bulk-delete', { ids: [...mine.map((r) => r.id), a.t3Shared.id, a.personal.id, standard.id] });
    expect(response.json()).toEqual({ success: true, changed: 2 });
    for (const row of mine) expect((await findAssistantById(db, row.id))!.status).toBe('deleted');
    expect((await findAssistantById(db, a.t3Shared.id))!.status).toBe('active');
    expect((await findAssistantById(db, a.personal.id))!.status).toBe('active');
    const again = await as(tok.admin, 'POST', '/api/admin/assistants/bulk-delete', { ids: mine.map((r) => r.id) });
    expect(again.json().changed).toBe(0);
  });

  it('never deletes the standard assistant, even for a super admin; refuses malformed ids', async () => {
    const standard = (await findStandardAssistant(t.platform.database.db))!;
    expect((await as(tok.super, 'POST', '/api/admin/assistants/bulk-delete', { ids: [standard.id] })).json().changed).toBe(0);
    expect((await as(tok.super, 'POST', '/api/admin/assistants/bulk-delete', { ids: ['x'] })).statusCode).toBe(400);
  });
});
