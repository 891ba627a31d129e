// PUT/DELETE /api/admin/user/{userId} and GET /api/admin/users: the spec's edit table and behaviour 3,
// through the real routes on a real database. Create-or-add, bulk and import are in admin-enrol.test.ts.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { creditLedger } from '../credits/credits.tables.js';
import { findMembership, insertMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findUserById, updateUser } from '../users/users.repo.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
let adminA: BuiltUser;
let tokenA: string;
let superAdmin: BuiltUser;
let tokenSuper: string;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db(), { name: 'Twin A' });
  twinB = await buildTwin(db(), { name: 'Twin B' });
  adminA = await buildUser(db(), { twin: twinA, role: 'admin', accountType: 'admin' });
  superAdmin = await buildUser(db(), { twin: twinB, accountType: 'super' });
  tokenA = await signIn(t.app, adminA.user.email);
  tokenSuper = await signIn(t.app, superAdmin.user.email);
});
afterAll(() => t.close());

const edit = (token: string, userId: string, body: unknown) => req(token, 'PUT', `/api/admin/user/${userId}`, body);

describe('PUT /api/admin/user/{userId}', () => {
  it('refuses a user id that is not 24 hexadecimal characters with 400', async () => {
    const response = await edit(tokenA, 'not-an-id', { fname: 'X' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, error: { field: 'params.userId' } });
  });

  it('lets an admin edit names of an account of their twin, and answers with the account', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const response = await edit(tokenA, member.user.id, { fname: 'Grace', lname: 'Hopper', unknownKey: 1 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, message: 'User updated', ignoredFields: [] });
    expect(response.body.data).toMatchObject({ _id: member.user.id, fname: 'Grace', lname: 'Hopper', institution: twinA.id });
    expect(response.body.data.memberships).toEqual([{ _id: member.membership!.id, institution: twinA.id, name: 'Twin A', role: 'user', permissions: [] }]);
    expect(response.body.data).not.toHaveProperty('passwordHash');
  });

  it('answers 404 to an admin of twin A for an account of twin B, and changes nothing', async () => {
    const other = await buildUser(db(), { twin: twinB, fname: 'Bea' });
    const response = await edit(tokenA, other.user.id, { fname: 'Hacked' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, message: 'User not found' });
    expect((await findUserById(db(), other.user.id))!.fname).toBe('Bea');
  });

  it('needs users.edit on the current twin: a shared member working in twin B is not editable by admin of A', async () => {
    const shared = await buildUser(db(), { twin: twinB });
    await insertMembership(db(), { twinId: twinA.id, userId: shared.user.id, role: 'user' });
    const response = await edit(tokenA, shared.user.id, { fname: 'X' });
    expect(response.status).toBe(403);
  });

  it('uses the caller\'s own twin when the account has no current twin', async () => {
    const loose = await buildUser(db(), { twin: twinA });
    await updateUser(db(), loose.user.id, { currentTwinId: null });
    expect((await edit(tokenA, loose.user.id, { lname: 'Free' })).status).toBe(200);
  });

  it('lets only a super admin edit a super admin or assign the super role', async () => {
    const otherSuper = await buildUser(db(), { twin: twinA, accountType: 'super', fname: 'Sue' });
    const asAdmin = await edit(tokenA, otherSuper.user.id, { fname: 'Demoted', accountType: 'user' });
    expect(asAdmin.status).toBe(403);
    expect(asAdmin.body.code).toBe('SUPER_ONLY');
    expect((await findUserById(db(), otherSuper.user.id))!.accountType).toBe('super');

    const member = await buildUser(db(), { twin: twinA });
    const promote = await edit(tokenA, member.user.id, { accountType: 'super' });
    expect(promote.status).toBe(403);
    expect(promote.body.message).toBe('Only a super admin can assign the super role');
    expect((await edit(tokenA, member.user.id, { accountType: 'admin' })).body.data.accountType).toBe('admin');

    expect((await edit(tokenSuper, member.user.id, { accountType: 'super' })).body.data.accountType).toBe('super');
    expect((await edit(tokenSuper, otherSuper.user.id, { fname: 'Still super' })).body.data.fname).toBe('Still super');
  });

  it("refuses accountType 'owner' and other values outside the enums with 400", async () => {
    const member = await buildUser(db(), { twin: twinA });
    const owner = await edit(tokenA, member.user.id, { accountType: 'owner' });
    expect(owner.status).toBe(400);
    expect(owner.body.error.field).toBe('body.accountType');
    expect((await edit(tokenA, member.user.id, { status: 'banned' })).status).toBe(400);
    expect((await edit(tokenA, member.user.id, { plan: 'gold' })).status).toBe(400);
    expect((await findUserById(db(), member.user.id))!.accountType).toBe('user');
  });

  it("deletes with status 'deleted' only for a holder of users.delete", async () => {
    const editor = await buildUser(db(), { twin: twinA, grants: ['users.list', 'users.edit'] });
    const editorToken = await signIn(t.app, editor.user.email);
    const member = await buildUser(db(), { twin: twinA });
    expect((await edit(editorToken, member.user.id, { fname: 'Fine' })).status).toBe(200);
    const refused = await edit(editorToken, member.user.id, { status: 'deleted' });
    expect(refused.status).toBe(403);
    expect(await findUserById(db(), member.user.id)).toBeDefined();

    const deleted = await edit(tokenA, member.user.id, { status: 'deleted' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.status).toBe('deleted');
    expect(await findUserById(db(), member.user.id)).toBeUndefined();
    expect((await req(tokenA, 'GET', `/api/admin/user/${member.user.id}`)).status).toBe(404);
  });

  it("places the account on `institution` with plan 'sdk', needing users.edit there", async () => {
    const member = await buildUser(db(), { twin: twinA });
    await updateUser(db(), member.user.id, { voiceAssistantId: 'aaaaaaaaaaaaaaaaaaaaaaaa' });
    // Admin of A only: twin B answers as not found and nothing moves.
    const refused = await edit(tokenA, member.user.id, { plan: 'sdk', institution: twinB.id });
    expect(refused.status).toBe(404);
    expect((await findUserById(db(), member.user.id))!.currentTwinId).toBe(twinA.id);

    const moved = await edit(tokenSuper, member.user.id, { plan: 'sdk', institution: twinB.id });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ plan: 'sdk', institution: twinB.id });
    const row = (await findUserById(db(), member.user.id))!;
    expect(row.voiceAssistantId).toBeNull();
    expect((await findMembership(db(), member.user.id, twinB.id))?.role).toBe('user');
  });

  it("applies `institution` only together with plan 'sdk', and other plans clear the current twin", async () => {
    const member = await buildUser(db(), { twin: twinA });
    const ignored = await edit(tokenSuper, member.user.id, { institution: twinB.id });
    expect(ignored.body).toMatchObject({ ignoredFields: ['institution'], data: { institution: twinA.id } });
    const free = await edit(tokenA, member.user.id, { plan: 'free' });
    expect(free.body.data).toMatchObject({ plan: 'free', institution: null });
    const profile = await req(await signIn(t.app, member.user.email), 'POST', '/api/user/refresh/profile', {});
    expect(profile.body.profile.institution).toBeNull();
  });

  it('sets credits and records the change in the ledger', async () => {
    const member = await buildUser(db(), { twin: twinA, credits: 10 });
    const response = await edit(tokenA, member.user.id, { credits: 25.5 });
    expect(response.body.data.credits).toBe(25.5);
    const entries = await db().select().from(creditLedger).where(eq(creditLedger.userId, member.user.id));
    expect(entries).toMatchObject([{ account: 'user', delta: 15.5, balanceAfter: 25.5, reason: 'admin.set', actorId: adminA.user.id }]);
    expect((await edit(tokenA, member.user.id, { credits: -1 })).status).toBe(400);
  });

  it('writes mustChangePassword and mfaEnabled, and a new password replaces the old one', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const response = await edit(tokenA, member.user.id, { mustChangePassword: true, mfaEnabled: true, password: 'a brand new secret' });
    expect(response.body.data).toMatchObject({ mustChangePassword: true, mfaEnabled: true });
    await expect(signIn(t.app, member.user.email)).rejects.toThrow(/401/);
    // The new password is right, and two-step verification now asks for an emailed code.
    const second = await t.app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email: member.user.email, password: 'a brand new secret' } });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ mfaRequired: true, mfaMethod: 'email' });
    expect(second.json()).not.toHaveProperty('token');
  });

  it('revokes the sessions of a person whose password an admin changes, and limits them under mustChangePassword', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const before = await signIn(t.app, member.user.email);
    expect((await req(before, 'POST', '/api/user/refresh/profile', {})).status).toBe(200);
    await edit(tokenA, member.user.id, { password: 'replaced by the admin' });
    expect((await req(before, 'POST', '/api/user/refresh/profile', {})).status).toBe(401);

    const fresh = await signIn(t.app, member.user.email, 'replaced by the admin');
    await edit(tokenA, member.user.id, { mustChangePassword: true });
    const limited = await req(fresh, 'GET', '/api/user/setting');
    expect(limited.status).toBe(403);
    expect(limited.body.code).toBe('PASSWORD_CHANGE_REQUIRED');
  });

  it('deactivation bites at once: the person\'s token stops working', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const token = await signIn(t.app, member.user.email);
    expect((await req(token, 'POST', '/api/user/refresh/profile', {})).status).toBe(200);
    expect((await edit(tokenA, member.user.id, { status: 'inactive' })).body.data.status).toBe('inactive');
    expect((await req(token, 'POST', '/api/user/refresh/profile', {})).status).toBe(401);
    expect((await edit(tokenA, member.user.id, { status: 'active' })).status).toBe(200);
    expect(await signIn(t.app, member.user.email)).toBeTypeOf('string');
  });

  it('refuses an email another live account uses (409) and deactivating oneself (400)', async () => {
    const one = await buildUser(db(), { twin: twinA });
    const two = await buildUser(db(), { twin: twinA });
    const taken = await edit(tokenA, one.user.id, { email: two.user.email.toUpperCase() });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('EMAIL_TAKEN');
    const self = await edit(tokenA, adminA.user.id, { status: 'inactive' });
    expect(self.status).toBe(400);
    expect(self.body.code).toBe('SELF_ACTION');
  });

  it('answers 404 to a plain member (no account is visible to them)', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const other = await buildUser(db(), { twin: twinA });
    const token = await signIn(t.app, member.user.email);
    expect((await edit(token, other.user.id, { fname: 'X' })).status).toBe(404);
  });
});

describe('DELETE /api/admin/user/{userId}', () => {
  it('soft-deletes: the account is deactivated, its sessions revoked and its email free again', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const token = await signIn(t.app, member.user.email);
    const response = await req(tokenA, 'DELETE', `/api/admin/user/${member.user.id}`);
    expect(response).toEqual({ status: 200, body: { success: true, message: 'User deleted' } });
    expect((await req(token, 'POST', '/api/user/refresh/profile', {})).status).toBe(401);
    await expect(signIn(t.app, member.user.email)).rejects.toThrow(/401/);
    expect((await req(tokenA, 'DELETE', `/api/admin/user/${member.user.id}`)).status).toBe(404);

    const again = await req(tokenA, 'POST', '/api/admin/user', { email: member.user.email, password: 'another password' });
    expect(again.status).toBe(201);
    expect(again.body.data._id).not.toBe(member.user.id);
  });

  it('leaves accounts of other twins (404) and super admins (403) alone', async () => {
    const other = await buildUser(db(), { twin: twinB });
    expect((await req(tokenA, 'DELETE', `/api/admin/user/${other.user.id}`)).status).toBe(404);
    const sup = await buildUser(db(), { twin: twinA, accountType: 'super' });
    expect((await req(tokenA, 'DELETE', `/api/admin/user/${sup.user.id}`)).status).toBe(403);
    expect(await findUserById(db(), sup.user.id)).toBeDefined();
  });
});

describe('GET /api/admin/users', () => {
  it('lists only people of the admin\'s twins, paginated and searchable; a super sees everyone', async () => {
    const twin = await buildTwin(db());
    const admin = await buildUser(db(), { twin, role: 'admin' });
    for (const fname of ['Alma', 'Alba', 'Bruno']) await buildUser(db(), { twin, fname });
    const outsider = await buildUser(db(), { twin: twinB, fname: 'Alfred' });
    const token = await signIn(t.app, admin.user.email);

    const all = await req(token, 'GET', '/api/admin/users?limit=2&page=1');
    expect(all.body).toMatchObject({ success: true, page: 1, limit: 2, total: 4 });
    expect(all.body.data).toHaveLength(2);
    const searched = await req(token, 'GET', '/api/admin/users?search=al');
    expect(searched.body.data.map((u: { fname: string }) => u.fname).sort()).toEqual(['Alba', 'Alma']);
    expect(searched.body.total).toBe(2);
    // The last page, partly full, and a page past the end both tell the whole count.
    expect((await req(token, 'GET', '/api/admin/users?limit=3&page=2')).body).toMatchObject({ total: 4, data: [expect.anything()] });
    expect((await req(token, 'GET', '/api/admin/users?limit=3&page=5')).body).toMatchObject({ total: 4, data: [] });
    // A fragment inside a name, in another case; a percent sign is a character, not a wildcard.
    const inside = await req(token, 'GET', '/api/admin/users?search=RUN');
    expect(inside.body).toMatchObject({ total: 1, data: [{ fname: 'Bruno' }] });
    expect((await req(token, 'GET', '/api/admin/users?search=%25l%25')).body).toMatchObject({ total: 0, data: [] });
    expect((await req(token, 'GET', `/api/admin/users?institution=${twinB.id}`)).body.total).toBe(0);

    const asSuper = await req(tokenSuper, 'GET', `/api/admin/users?search=${outsider.user.email}`);
    expect(asSuper.body.data.map((u: { _id: string }) => u._id)).toEqual([outsider.user.id]);
  });

  it('gives a plain member an empty list', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const response = await req(await signIn(t.app, member.user.email), 'GET', '/api/admin/users');
    expect(response.body).toMatchObject({ success: true, total: 0, data: [] });
  });
});

describe('PUT|DELETE /api/admin/membership/{id}', () => {
  it("sets a member's role and grants, which bite at once, and refuses other twins, supers and oneself", async () => {
    const member = await buildUser(db(), { twin: twinA });
    const token = await signIn(t.app, member.user.email);
    expect((await req(token, 'GET', '/api/admin/users')).body.total).toBe(0);
    const granted = await req(tokenA, 'PUT', `/api/admin/membership/${member.membership!.id}`, { permissions: ['users.list', 'users.list'] });
    expect(granted.body.data).toMatchObject({ role: 'user', permissions: ['users.list'] });
    expect((await req(token, 'GET', '/api/admin/users')).body.total).toBeGreaterThan(1);
    expect((await req(tokenA, 'PUT', `/api/admin/membership/${member.membership!.id}`, { permissions: ['everything'] })).status).toBe(400);

    const other = await buildUser(db(), { twin: twinB });
    expect((await req(tokenA, 'PUT', `/api/admin/membership/${other.membership!.id}`, { role: 'admin' })).status).toBe(404);
    const sup = await buildUser(db(), { twin: twinA, accountType: 'super' });
    expect((await req(tokenA, 'PUT', `/api/admin/membership/${sup.membership!.id}`, { role: 'admin' })).status).toBe(403);
    expect((await req(tokenA, 'PUT', `/api/admin/membership/${adminA.membership!.id}`, { role: 'user' })).status).toBe(400);
  });

  it('removes a person from the twin, moving them off it when it was current', async () => {
    const member = await buildUser(db(), { twin: twinA });
    const response = await req(tokenA, 'DELETE', `/api/admin/membership/${member.membership!.id}`);
    expect(response.body).toEqual({ success: true, message: 'Membership removed' });
    expect(await findMembership(db(), member.user.id, twinA.id)).toBeUndefined();
    expect((await findUserById(db(), member.user.id))!.currentTwinId).toBeNull();
    expect((await req(tokenA, 'GET', `/api/admin/user/${member.user.id}`)).status).toBe(404);
  });
});
