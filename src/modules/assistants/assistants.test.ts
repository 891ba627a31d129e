// The Assistants family through the real routes: system assistants from the first start, create,
// read, delete, favorites (idempotent, spec messages) and favorites populated on profile refresh.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildAssistant } from '../../../test/support/assistants.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { findUserById } from '../users/users.repo.js';
import { twins } from '../twins/twins.tables.js';
import { findAssistantById, findStandardAssistant } from './assistants.repo.js';
import { assistants } from './assistants.tables.js';
import { ensureSystemAssistants, SYSTEM_ASSISTANTS } from './seed.js';

let t: TestApp;
let twinId: string;
let owner: { id: string; token: string };
let member: { id: string; token: string };
let admin: { id: string; token: string };
let outsider: { id: string; token: string };

const as = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-access-token': token }, payload });

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  const twin = await buildTwin(db);
  twinId = twin.id;
  const make = async (options: Parameters<typeof buildUser>[1]) => {
    const built = await buildUser(db, options);
    return { id: built.user.id, token: await signIn(t.app, built.user.email) };
  };
  owner = await make({ twin });
  member = await make({ twin });
  admin = await make({ twin, role: 'admin' });
  outsider = await make({});
});
afterAll(() => t.close());

describe('system assistants', () => {
  it('exist from the first start, New Conversation among them, without owner or twin', async () => {
    const standard = await findStandardAssistant(t.platform.database.db);
    expect(standard).toMatchObject({ name: 'New Conversation', userId: null, twinId: null, status: 'active' });
  });

  it('are seeded idempotently', async () => {
    const db = t.platform.database.db;
    await ensureSystemAssistants(db);
    await ensureSystemAssistants(db);
    const rows = await db.select().from(assistants);
    expect(rows.filter((row) => row.systemKey).length).toBe(SYSTEM_ASSISTANTS.length);
  });
});

describe('POST /api/user/assistant', () => {
  it('creates an assistant in the current twin, owned by the caller, with defaults', async () => {
    const response = await as(member.token, 'POST', '/api/user/assistant', { name: 'Helper', instructions: 'Do it', liked_count: 5, user: owner.id });
    expect(response.statusCode).toBe(201);
    const { success, data, scope, sharingDropped } = response.json();
    expect(success).toBe(true);
    expect(data).toMatchObject({
      name: 'Helper', instructions: 'Do it', status: 'active', user: member.id, institution: twinId, liked_count: 0,
      assistantToolMode: 'auto', stsReasoningEffort: null, institution_shared: false, canEdit: true, scope: 'user',
    });
    expect({ scope, sharingDropped }).toEqual({ scope: 'user', sharingDropped: false });
    expect(data._id).toMatch(/^[0-9a-f]{24}$/);
    expect(data.created).toMatch(/Z$/);
  });

  it("makes a personal assistant with institution ''", async () => {
    const response = await as(member.token, 'POST', '/api/user/assistant', { name: 'Mine', institution: '' });
    expect(response.json().data).toMatchObject({ institution: null, user: member.id });
  });

  it('shares only when the caller manages the twin', async () => {
    const plain = await as(member.token, 'POST', '/api/user/assistant', { name: 'S1', institution_shared: true });
    expect(plain.json()).toMatchObject({ scope: 'user', sharingDropped: true, data: { institution_shared: false } });
    const managed = await as(admin.token, 'POST', '/api/user/assistant', { name: 'S2', institution_shared: true });
    expect(managed.json()).toMatchObject({ scope: 'institution', sharingDropped: false, data: { institution_shared: true } });
  });

  it('refuses a missing name, an enum violation and status deleted with Invalid Properties', async () => {
    for (const payload of [{}, { name: 'X', assistantToolMode: 'maybe' }, { name: 'X', status: 'deleted' }, { name: 'X', $inc: { liked_count: 1 } }]) {
      const response = await as(member.token, 'POST', '/api/user/assistant', payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false, message: 'Invalid Properties' });
    }
  });

  it('answers 404 for a twin the caller is not in, and 403 where assistant creation is off', async () => {
    const other = await buildTwin(t.platform.database.db);
    const foreign = await as(member.token, 'POST', '/api/user/assistant', { name: 'X', institution: other.id });
    expect(foreign.statusCode).toBe(404);
    const locked = await buildTwin(t.platform.database.db, { disableAssistantsForUser: true });
    const person = await buildUser(t.platform.database.db, { twin: locked });
    const boss = await buildUser(t.platform.database.db, { twin: locked, role: 'admin' });
    const refused = await as(await signIn(t.app, person.user.email), 'POST', '/api/user/assistant', { name: 'X' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, code: 'ASSISTANTS_DISABLED' });
    const allowed = await as(await signIn(t.app, boss.user.email), 'POST', '/api/user/assistant', { name: 'X' });
    expect(allowed.statusCode).toBe(201);
  });
});

describe('GET /api/user/assistant/{id}', () => {
  it('shows a shared assistant to a member without its instructions, and with them to its owner', async () => {
    const row = await buildAssistant(t.platform.database.db, { userId: owner.id, twinId, twinShared: true, instructions: 'secret sauce' });
    const seen = await as(member.token, 'GET', `/api/user/assistant/${row.id}`);
    expect(seen.statusCode).toBe(200);
    expect(seen.json().data).toMatchObject({ _id: row.id, instructions: '', canEdit: false, scope: 'institution' });
    const mine = await as(owner.token, 'GET', `/api/user/assistant/${row.id}`);
    expect(mine.json().data).toMatchObject({ instructions: 'secret sauce', canEdit: true });
    const admins = await as(admin.token, 'GET', `/api/user/assistant/${row.id}`);
    expect(admins.json().data.canEdit).toBe(true);
  });

  it('answers 404 Assistant not found! outside the caller\'s scope, for unknown and for deleted ones', async () => {
    const privateOne = await buildAssistant(t.platform.database.db, { userId: owner.id, twinId, twinShared: true });
    const gone = await buildAssistant(t.platform.database.db, { userId: owner.id, status: 'deleted' });
    for (const [token, id] of [[outsider.token, privateOne.id], [owner.token, gone.id], [owner.token, 'd'.repeat(24)]]) {
      const response = await as(token, 'GET', `/api/user/assistant/${id}`);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ success: false, message: 'Assistant not found!', code: 'ASSISTANT_NOT_FOUND' });
    }
  });
});

describe('DELETE /api/user/assistant/{id}', () => {
  it('lets the owner delete: status becomes deleted and it leaves the list', async () => {
    const row = await buildAssistant(t.platform.database.db, { userId: owner.id, twinId });
    const response = await as(owner.token, 'DELETE', `/api/user/assistant/${row.id}`);
    expect(response.json()).toEqual({ success: true, message: 'Assistant deleted successfully' });
    expect((await findAssistantById(t.platform.database.db, row.id))!.status).toBe('deleted');
    const list = await as(owner.token, 'GET', '/api/user/assistants');
    expect(list.json().data.map((a: { _id: string }) => a._id)).not.toContain(row.id);
    expect((await as(owner.token, 'DELETE', `/api/user/assistant/${row.id}`)).statusCode).toBe(404);
  });

  it('refuses a member on a shared assistant (403), lets the twin admin delete it, refuses an outsider (404)', async () => {
    const row = await buildAssistant(t.platform.database.db, { userId: owner.id, twinId, twinShared: true, editableOthers: true });
    expect((await as(outsider.token, 'DELETE', `/api/user/assistant/${row.id}`)).statusCode).toBe(404);
    const refused = await as(member.token, 'DELETE', `/api/user/assistant/${row.id}`);
    expect(refused.statusCode).toBe(403);
    expect((await as(admin.token, 'DELETE', `/api/user/assistant/${row.id}`)).statusCode).toBe(200);
  });

  it('never deletes the standard assistant', async () => {
    const boss = await buildUser(t.platform.database.db, { accountType: 'super' });
    const standard = (await findStandardAssistant(t.platform.database.db))!;
    const response = await as(await signIn(t.app, boss.user.email), 'DELETE', `/api/user/assistant/${standard.id}`);
    expect(response.statusCode).toBe(403);
    expect((await findStandardAssistant(t.platform.database.db))!.status).toBe('active');
  });
});

describe('favorites', () => {
  it('adds idempotently: a second add returns the list unchanged and saves nothing', async () => {
    const row = await buildAssistant(t.platform.database.db, { userId: owner.id });
    const first = await as(owner.token, 'POST', `/api/user/favoriteAssistants/${row.id}`);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ success: true, favoriteAssistants: [row.id] });
    const before = (await findUserById(t.platform.database.db, owner.id))!;
    const second = await as(owner.token, 'POST', `/api/user/favoriteAssistants/${row.id}`);
    expect(second.json()).toEqual({ success: true, favoriteAssistants: [row.id] });
    const after = (await findUserById(t.platform.database.db, owner.id))!;
    expect(after.updatedAt).toEqual(before.updatedAt);
    expect(after.favoriteAssistants).toEqual([row.id]);
  });

  it('keeps one copy under concurrent adds', async () => {
    const row = await buildAssistant(t.platform.database.db, { userId: member.id });
    await Promise.all([1, 2, 3].map(() => as(member.token, 'POST', `/api/user/favoriteAssistants/${row.id}`)));
    expect((await findUserById(t.platform.database.db, member.id))!.favoriteAssistants.filter((id) => id === row.id)).toHaveLength(1);
  });

  it('answers a malformed id with 400 "Invalid assistant id" and an unpickable one with 404', async () => {
    const malformed = await as(owner.token, 'POST', '/api/user/favoriteAssistants/12345');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ success: false, message: 'Invalid assistant id' });
    const hidden = await buildAssistant(t.platform.database.db, { userId: member.id, twinId });
    const refused = await as(owner.token, 'POST', `/api/user/favoriteAssistants/${hidden.id}`);
    expect(refused.statusCode).toBe(404);
    expect(refused.json().message).toBe('Assistant not found!');
    const anonymous = await t.app.inject({ method: 'POST', url: `/api/user/favoriteAssistants/${hidden.id}` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('removes, idempotently', async () => {
    const row = await buildAssistant(t.platform.database.db, { userId: admin.id });
    await as(admin.token, 'POST', `/api/user/favoriteAssistants/${row.id}`);
    const removed = await as(admin.token, 'DELETE', `/api/user/favoriteAssistants/${row.id}`);
    expect(removed.json()).toEqual({ success: true, favoriteAssistants: [] });
    expect((await as(admin.token, 'DELETE', `/api/user/favoriteAssistants/${row.id}`)).json().favoriteAssistants).toEqual([]);
  });

  it('are populated as records on profile refresh, only those still pickable, in order', async () => {
    const person = await buildUser(t.platform.database.db, { twin: (await t.platform.database.db.select().from(twins).where(eq(twins.id, twinId)))[0] });
    const token = await signIn(t.app, person.user.email);
    const standard = (await findStandardAssistant(t.platform.database.db))!;
    const kept = await buildAssistant(t.platform.database.db, { userId: person.user.id, name: 'Kept one' });
    const doomed = await buildAssistant(t.platform.database.db, { userId: owner.id, twinId, twinShared: true });
    for (const id of [kept.id, doomed.id, standard.id]) expect((await as(token, 'POST', `/api/user/favoriteAssistants/${id}`)).statusCode).toBe(200);
    await as(owner.token, 'DELETE', `/api/user/assistant/${doomed.id}`);
    const profile = (await as(token, 'POST', '/api/user/refresh/profile', {})).json().profile;
    expect(profile.favoriteAssistants.map((a: { _id: string }) => a._id)).toEqual([kept.id, standard.id]);
    expect(profile.favoriteAssistants[0]).toMatchObject({ name: 'Kept one', user: person.user.id, status: 'active' });
  });
});

describe('OpenAPI document', () => {
  it('shows the assistant enums once, as named schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/docs/json' })).json();
    expect(doc.components.schemas.assistantToolMode.enum).toEqual(['auto', 'none', 'required']);
    expect(doc.components.schemas.stsReasoningEffort.enum).toEqual(['off', 'minimal', 'low', 'medium', 'high']);
    expect(doc.paths['/api/user/assistant/{id}'].put).toBeDefined();
  });
});
