// A person's memberships through the real routes: list, switch (clears the voice assistant), leave with
// the spec's four failure messages, join where allowed. Also the preferences routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { findMembership, insertMembership } from '../twins/twins.repo.js';
import { findUserById, updateUser } from '../users/users.repo.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
const db = () => t.platform.database.db;
const VOICE = 'abcdefabcdefabcdefabcdef';

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
});
afterAll(() => t.close());

/** A person in twin A (current, admin there) and twin B (user), with a voice assistant chosen. */
async function twoTwinPerson() {
  const twinA = await buildTwin(db(), { name: 'Home Twin' });
  const twinB = await buildTwin(db(), { name: 'Second Twin' });
  const person = await buildUser(db(), { twin: twinA, role: 'admin' });
  const second = await insertMembership(db(), { twinId: twinB.id, userId: person.user.id, role: 'user' });
  await updateUser(db(), person.user.id, { voiceAssistantId: VOICE });
  const token = await signIn(t.app, person.user.email);
  return { twinA, twinB, person, second, token };
}

describe('GET /api/user/institutions', () => {
  it('lists memberships with role, permissions of that twin and the current flag', async () => {
    const { twinA, twinB, person, token } = await twoTwinPerson();
    const response = await req(token, 'GET', '/api/user/institutions');
    expect(response.status).toBe(200);
    const [home, second] = response.body.data;
    expect(home).toMatchObject({ _id: person.membership!.id, institution: { _id: twinA.id, name: 'Home Twin', status: 'active' }, role: 'admin', current: true });
    expect(home.permissions).toContain('users.edit');
    expect(second).toMatchObject({ institution: { _id: twinB.id }, role: 'user', permissions: [], current: false });
  });
});

describe('POST /api/user/institution/switch', () => {
  it('switches, clears the voice assistant, and the permissions follow at once', async () => {
    const { twinB, person, token } = await twoTwinPerson();
    const response = await req(token, 'POST', '/api/user/institution/switch', { institutionId: twinB.id });
    expect(response.status).toBe(200);
    expect(response.body.profile.institution._id).toBe(twinB.id);
    expect(response.body.profile.permissions).toEqual([]);
    expect((await findUserById(db(), person.user.id))!.voiceAssistantId).toBeNull();
    // The session works in the new twin at once (no stale cached caller).
    const listed = (await req(token, 'GET', '/api/user/institutions')).body.data;
    expect(listed.filter((m: { current: boolean }) => m.current).map((m: { institution: { _id: string } }) => m.institution._id)).toEqual([twinB.id]);
  });

  it('answers 404 for a twin the caller does not belong to and 403 for an inactive one', async () => {
    const { person, token } = await twoTwinPerson();
    const stranger = await buildTwin(db());
    expect((await req(token, 'POST', '/api/user/institution/switch', { institutionId: stranger.id })).status).toBe(404);
    const inactive = await buildTwin(db(), { status: 'inactive' });
    await insertMembership(db(), { twinId: inactive.id, userId: person.user.id });
    const refused = await req(token, 'POST', '/api/user/institution/switch', { institutionId: inactive.id });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'INSTITUTION_INACTIVE', institutionId: inactive.id });
    expect((await req(token, 'POST', '/api/user/institution/switch', { institutionId: 'nope' })).status).toBe(400);
  });
});

describe('DELETE /api/user/userInstitution/{id}', () => {
  it('leaves the current twin and switches to another membership', async () => {
    const { twinA, twinB, person, token } = await twoTwinPerson();
    const response = await req(token, 'DELETE', `/api/user/userInstitution/${person.membership!.id}`);
    expect(response).toEqual({ status: 200, body: { success: true, message: 'You left Home Twin' } });
    expect(await findMembership(db(), person.user.id, twinA.id)).toBeUndefined();
    const row = (await findUserById(db(), person.user.id))!;
    expect(row.currentTwinId).toBe(twinB.id);
    expect(row.voiceAssistantId).toBeNull();
    const profile = await req(token, 'POST', '/api/user/refresh/profile', {});
    expect(profile.body.profile.institution._id).toBe(twinB.id);
  });

  it('leaves a non-current twin without switching; leaving the last one leaves no current twin', async () => {
    const { twinA, person, second, token } = await twoTwinPerson();
    expect((await req(token, 'DELETE', `/api/user/userInstitution/${second.id}`)).status).toBe(200);
    expect((await findUserById(db(), person.user.id))!.currentTwinId).toBe(twinA.id);
    expect((await findUserById(db(), person.user.id))!.voiceAssistantId).toBe(VOICE);
    expect((await req(token, 'DELETE', `/api/user/userInstitution/${person.membership!.id}`)).status).toBe(200);
    expect((await findUserById(db(), person.user.id))!.currentTwinId).toBeNull();
  });

  it('answers the spec\'s failure messages', async () => {
    const { token } = await twoTwinPerson();
    const other = await buildUser(db());
    const invalid = await req(token, 'DELETE', '/api/user/userInstitution/xyz');
    expect(invalid).toMatchObject({ status: 400, body: { success: false, message: 'invalid user institution Id' } });
    const anonymous = await req(null, 'DELETE', `/api/user/userInstitution/${other.membership!.id}`);
    expect(anonymous).toMatchObject({ status: 401, body: { success: false, message: 'Authentication Required' } });
    const notYours = await req(token, 'DELETE', `/api/user/userInstitution/${other.membership!.id}`);
    expect(notYours).toMatchObject({ status: 403, body: { success: false, message: 'Invalid Membership. Not yours!' } });
    expect(await findMembership(db(), other.user.id, other.twin!.id)).toBeDefined();
    const missing = await req(token, 'DELETE', '/api/user/userInstitution/ffffffffffffffffffffffff');
    expect(missing).toMatchObject({ status: 404, body: { success: false, message: 'Not Found' } });
  });
});

describe('POST /api/user/institution/join', () => {
  it('joins an open twin by publicId, which becomes current', async () => {
    const { token, person } = await twoTwinPerson();
    const open = await buildTwin(db(), { allowJoining: 'open' });
    const response = await req(token, 'POST', '/api/user/institution/join', { publicId: open.publicId });
    expect(response.status).toBe(200);
    expect(response.body.profile.institution._id).toBe(open.id);
    expect((await findMembership(db(), person.user.id, open.id))?.role).toBe('user');
  });

  it('refuses a closed twin, an admins-only twin to a plain account, and an inactive twin', async () => {
    const { token } = await twoTwinPerson();
    const closed = await buildTwin(db());
    expect((await req(token, 'POST', '/api/user/institution/join', { institutionId: closed.id })).body.code).toBe('JOINING_CLOSED');
    const adminsOnly = await buildTwin(db(), { allowJoining: 'open', joiningAdminOnly: true });
    expect((await req(token, 'POST', '/api/user/institution/join', { institutionId: adminsOnly.id })).body.code).toBe('JOINING_ADMIN_ONLY');
    const teacher = await buildUser(db(), { accountType: 'admin' });
    const teacherToken = await signIn(t.app, teacher.user.email);
    expect((await req(teacherToken, 'POST', '/api/user/institution/join', { institutionId: adminsOnly.id })).status).toBe(200);
    const inactive = await buildTwin(db(), { allowJoining: 'open', status: 'inactive' });
    expect((await req(token, 'POST', '/api/user/institution/join', { institutionId: inactive.id })).status).toBe(403);
    expect((await req(token, 'POST', '/api/user/institution/join', { institutionId: 'ffffffffffffffffffffffff' })).status).toBe(404);
  });
});

describe('GET/PUT /api/user/setting', () => {
  it('reads and writes the preferences field by field', async () => {
    const { token } = await twoTwinPerson();
    const before = await req(token, 'GET', '/api/user/setting');
    expect(before.body).toEqual({
      success: true,
      data: { dark_mode: false, pin_ui: false, use_location: false, browser_voice: '', rt_voice: '', remember_history_count: 10, userMemoryEnabled: true, voiceAssistantId: VOICE },
    });
    const saved = await req(token, 'PUT', '/api/user/setting', { dark_mode: true, userMemoryEnabled: false, rt_voice: 'alloy', voiceAssistantId: null, credits: 1e6 });
    expect(saved.body.data).toMatchObject({ dark_mode: true, userMemoryEnabled: false, rt_voice: 'alloy', voiceAssistantId: null, pin_ui: false });
    const profile = await req(token, 'POST', '/api/user/refresh/profile', {});
    expect(profile.body.profile).toMatchObject({ dark_mode: true, userMemoryEnabled: false, rt_voice: 'alloy', credits: 0 });
    expect((await req(token, 'PUT', '/api/user/setting', { remember_history_count: -1 })).status).toBe(400);
    expect((await req(token, 'PUT', '/api/user/setting', { dark_mode: 'yes' })).status).toBe(400);
  });
});
