// Memory parameters through the real routes: the list, create, the PATCH and DELETE rules as a table,
// memoryAdminsOnly, the Enable User Memory switch (behaviour 7), cross-tenant cases, behaviour 6.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { updateTwin } from '../twins/twins.repo.js';
import { updateUser } from '../users/users.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { recallForTurn } from './recall.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
const token: Record<'author' | 'other' | 'grantee' | 'admin' | 'super' | 'outsider', string> = {} as never;
const ids: Record<string, string> = {};
const db = () => t.platform.database.db;

async function create(who: keyof typeof token, body: Record<string, unknown>) {
  return req(token[who], 'POST', '/api/user/memory', body);
}

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db(), { name: 'Alpha Twin', ainame: 'Alpha AI', picture: 'https://img.test/a.png' });
  twinB = await buildTwin(db(), { name: 'Beta Twin' });
  const people = {
    author: await buildUser(db(), { twin: twinA }),
    other: await buildUser(db(), { twin: twinA }),
    grantee: await buildUser(db(), { twin: twinA, grants: ['institutions.edit'] }),
    admin: await buildUser(db(), { twin: twinA, role: 'admin' }),
    super: await buildUser(db(), { twin: twinB, accountType: 'super' }),
    outsider: await buildUser(db(), { twin: twinB, role: 'admin' }),
  };
  for (const [who, built] of Object.entries(people)) {
    token[who as keyof typeof token] = await signIn(t.app, built.user.email);
    ids[who] = built.user.id;
  }
  // The super admin works in twin A (switching twins is another family's route; the column is the truth).
  await updateUser(db(), people.super.user.id, { currentTwinId: twinA.id });
  token.super = await signIn(t.app, people.super.user.email);
});
afterAll(() => t.close());

describe('POST and GET /api/user/memory', () => {
  it('creates a personal row with every field of the spec and lists it for its author only', async () => {
    const created = await create('author', { key_name: 'favourite colour', key_value: 'teal', key_description: 'for slides' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      data: {
        _id: expect.stringMatching(/^[0-9a-f]{24}$/), key_name: 'favourite colour', key_value: 'teal', key_description: 'for slides',
        key_namespace: 'default', shared: false, editable: true, isAuthor: true, created: expect.any(String),
        institution: { _id: twinA.id, name: 'Alpha Twin', ainame: 'Alpha AI', picture: 'https://img.test/a.png' },
      },
    });
    expect(Number.isNaN(Date.parse(created.body.data.created))).toBe(false);
    ids.personal = created.body.data._id;
    const mine = await req(token.author, 'GET', '/api/user/memory');
    expect(mine.body.data.map((m: { _id: string }) => m._id)).toContain(ids.personal);
    const others = await req(token.other, 'GET', '/api/user/memory');
    expect(others.body.data.map((m: { _id: string }) => m._id)).not.toContain(ids.personal);
  });

  it('refuses shared rows from people who do not manage the twin while memoryAdminsOnly is on', async () => {
    const refused = await create('author', { key_name: 'office', key_value: 'Room 4', shared: true });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, code: 'MEMORY_ADMINS_ONLY' });
    const byAdmin = await create('admin', { key_name: 'office hours', key_value: 'Mondays 9-11', key_namespace: 'course', shared: true });
    expect(byAdmin.status).toBe(201);
    ids.sharedByAdmin = byAdmin.body.data._id;
    await updateTwin(db(), twinA.id, { memoryAdminsOnly: false });
    const allowed = await create('author', { key_name: 'office', key_value: 'Room 4', shared: true });
    expect(allowed.status).toBe(201);
    ids.sharedByAuthor = allowed.body.data._id;
    await updateTwin(db(), twinA.id, { memoryAdminsOnly: true });
    const switching = await create('author', { key_name: 'pet', key_value: 'a cat' });
    const toShared = await req(token.author, 'PATCH', `/api/user/memory/${switching.body.data._id}`, { shared: true });
    expect(toShared.status).toBe(403);
    expect(toShared.body.code).toBe('MEMORY_ADMINS_ONLY');
  });

  it('shows shared rows to everyone in the twin, editable only for those who may edit them', async () => {
    const view = async (who: keyof typeof token) =>
      (await req(token[who], 'GET', '/api/user/memory')).body.data.find((m: { _id: string }) => m._id === ids.sharedByAdmin);
    expect(await view('other')).toMatchObject({ shared: true, editable: false, isAuthor: false, key_namespace: 'course' });
    expect(await view('grantee')).toMatchObject({ editable: true, isAuthor: false });
    expect(await view('admin')).toMatchObject({ editable: true, isAuthor: true });
    expect(await view('outsider')).toBeUndefined();
  });

  it('validates the body and needs a session', async () => {
    expect((await create('author', { key_name: '', key_value: 'x' })).status).toBe(400);
    expect((await create('author', { key_name: 'k' })).status).toBe(400);
    expect((await req(null, 'GET', '/api/user/memory')).status).toBe(401);
  });
});

describe('PATCH /api/user/memory/{id}: who may edit', () => {
  const cases: Array<[string, keyof typeof token, 'personal' | 'sharedByAuthor', number]> = [
    ['the author, own personal row', 'author', 'personal', 200],
    ['the author, own shared row', 'author', 'sharedByAuthor', 200],
    ['a non-author, a personal row', 'other', 'personal', 404],
    ['a non-author without institutions.edit, a shared row', 'other', 'sharedByAuthor', 403],
    ['a non-author holding institutions.edit, a shared row', 'grantee', 'sharedByAuthor', 200],
    ['a non-author holding institutions.edit, a personal row', 'grantee', 'personal', 404],
    ['a super admin, a shared row', 'super', 'sharedByAuthor', 200],
    ['a super admin, a personal row', 'super', 'personal', 404],
    ['an admin of another twin, a shared row', 'outsider', 'sharedByAuthor', 404],
  ];
  it.each(cases)('%s → %i', async (_label, who, row, status) => {
    const value = `value by ${who}`;
    const response = await req(token[who], 'PATCH', `/api/user/memory/${ids[row]}`, { key_value: value });
    expect(response.status).toBe(status);
    if (status === 200) expect(response.body).toMatchObject({ success: true, data: { _id: ids[row], key_value: value, editable: true, isAuthor: who === 'author' } });
    if (status === 403) expect(response.body).toMatchObject({ success: false, code: 'MEMORY_NOT_EDITABLE' });
    if (status === 404) expect(response.body).toMatchObject({ success: false, message: 'Memory not found' });
    const stored = (await req(token.author, 'GET', '/api/user/memory')).body.data.find((m: { _id: string }) => m._id === ids[row]);
    expect(stored.key_value === value).toBe(status === 200);
  });

  it('applies only key_value, key_description and shared', async () => {
    const response = await req(token.author, 'PATCH', `/api/user/memory/${ids.personal}`, {
      key_value: 'navy', key_description: 'changed', key_name: 'hacked', key_namespace: 'hacked', isAuthor: false, editable: false,
      created: '2000-01-01T00:00:00.000Z', institution: twinB.id, _id: '0'.repeat(24),
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      _id: ids.personal, key_name: 'favourite colour', key_value: 'navy', key_description: 'changed', key_namespace: 'default',
      isAuthor: true, institution: { _id: twinA.id },
    });
    expect(response.body.data.created).not.toBe('2000-01-01T00:00:00.000Z');
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    expect((await req(token.author, 'PATCH', `/api/user/memory/${'a'.repeat(24)}`, { key_value: 'x' })).status).toBe(404);
    expect((await req(token.author, 'PATCH', '/api/user/memory/nope', { key_value: 'x' })).status).toBe(400);
  });
});

describe('DELETE /api/user/memory/{id}', () => {
  it('follows the edit rule', async () => {
    const row = (await create('admin', { key_name: 'temp', key_value: 'x', shared: true })).body.data._id;
    const personal = (await create('author', { key_name: 'temp', key_value: 'y' })).body.data._id;
    expect((await req(token.other, 'DELETE', `/api/user/memory/${row}`)).status).toBe(403);
    expect((await req(token.outsider, 'DELETE', `/api/user/memory/${row}`)).status).toBe(404);
    expect((await req(token.grantee, 'DELETE', `/api/user/memory/${personal}`)).status).toBe(404);
    expect((await req(token.grantee, 'DELETE', `/api/user/memory/${row}`))).toEqual({ status: 200, body: { success: true, message: 'Memory deleted' } });
    expect((await req(token.author, 'DELETE', `/api/user/memory/${personal}`)).status).toBe(200);
    const left = (await req(token.author, 'GET', '/api/user/memory')).body.data.map((m: { _id: string }) => m._id);
    expect(left).not.toContain(row);
    expect(left).not.toContain(personal);
  });
});

describe('Enable User Memory switch (behaviour 7)', () => {
  it('off: no personal memory saved or recalled; rows stay editable; shared memory still recalled', async () => {
    const scope = { userId: ids.author, twinId: twinA.id };
    const before = await recallForTurn(db(), { ...scope, userMemoryEnabled: true }, 'what colour?');
    expect(before.memories.map((m) => m.id)).toEqual(expect.arrayContaining([ids.personal, ids.sharedByAdmin]));

    expect((await req(token.author, 'PUT', '/api/user/setting', { userMemoryEnabled: false })).status).toBe(200);
    const refused = await create('author', { key_name: 'new', key_value: 'fact' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('USER_MEMORY_DISABLED');
    const listed = (await req(token.author, 'GET', '/api/user/memory')).body.data.map((m: { _id: string }) => m._id);
    expect(listed).toContain(ids.personal);
    expect((await req(token.author, 'PATCH', `/api/user/memory/${ids.personal}`, { key_value: 'indigo' })).body.data.key_value).toBe('indigo');

    const after = await recallForTurn(db(), { ...scope, userMemoryEnabled: false }, 'what colour?');
    const recalled = after.memories.map((m) => m.id);
    expect(recalled).not.toContain(ids.personal);
    expect(recalled).toContain(ids.sharedByAdmin);
    expect(after.memories.every((m) => m.shared)).toBe(true);
    // A turn's recall reads the switch itself ('as-set'): off, only the shared rows.
    const asSetOff = (await recallForTurn(db(), { ...scope, userMemoryEnabled: 'as-set' }, 'what colour?')).memories;
    expect(asSetOff.map((m) => m.id).sort()).toEqual(after.memories.map((m) => m.id).sort());

    expect((await req(token.author, 'PUT', '/api/user/setting', { userMemoryEnabled: true })).status).toBe(200);
    expect((await create('author', { key_name: 'new', key_value: 'fact' })).status).toBe(201);
    const asSetOn = (await recallForTurn(db(), { ...scope, userMemoryEnabled: 'as-set' }, 'what colour?')).memories.map((m) => m.id);
    expect(asSetOn).toEqual(expect.arrayContaining([ids.personal, ids.sharedByAdmin]));
  });

  it('still saves shared rows for a person whose switch is off', async () => {
    expect((await req(token.admin, 'PUT', '/api/user/setting', { userMemoryEnabled: false })).status).toBe(200);
    try {
      expect((await create('admin', { key_name: 'term dates', key_value: 'Sept to June', shared: true })).status).toBe(201);
      expect((await create('admin', { key_name: 'mine', key_value: 'no' })).status).toBe(403);
    } finally {
      await req(token.admin, 'PUT', '/api/user/setting', { userMemoryEnabled: true });
    }
  });

  it('recalls nothing of another twin', async () => {
    const recalled = await recallForTurn(db(), { userId: ids.author, twinId: twinB.id, userMemoryEnabled: true }, 'colour');
    expect(recalled.memories).toEqual([]);
  });
});

describe('behaviour 6 through PUT /api/admin/institution/{id}', () => {
  it('enabling long-term memory also sets admins-only off and the default mode to long-term in the same save', async () => {
    const twin = await buildTwin(db(), { memoryAdminsOnly: true, defaultMemoryMode: 'session' });
    const saved = await req(token.super, 'PUT', `/api/admin/institution/${twin.id}`, { longTermMemoryEnabled: true });
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({ longTermMemoryEnabled: true, memoryAdminsOnly: false, defaultMemoryMode: 'long_term' });
  });
});
