// Administrators and sign-in security: the sessions family (list, revoke one, revoke many) and the
// authenticator reset, each scoped to the twins the caller administers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { authenticatorCode, mailedCode, post, profileStatus, signInRaw } from '../../../test/support/identity.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';

let t: TestApp;
let smtp: TestSmtpServer;
let admin: BuiltUser;
let adminToken: string;
let otherAdminToken: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  admin = await buildUser(t.platform.database.db, { role: 'admin' });
  adminToken = await signIn(t.app, admin.user.email);
  const otherAdmin = await buildUser(t.platform.database.db, { role: 'admin' });
  otherAdminToken = await signIn(t.app, otherAdmin.user.email);
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const db = () => t.platform.database.db;
const sid = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;
const get = (url: string, token: string) => t.app.inject({ method: 'GET', url, headers: { 'x-access-token': token } });
const del = (url: string, token: string) => t.app.inject({ method: 'DELETE', url, headers: { 'x-access-token': token } });

describe('GET /api/admin/sessions', () => {
  it("lists the twin's live sessions with their person", async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, member.user.email);
    const response = await get('/api/admin/sessions?limit=100', adminToken);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const row = body.data.find((s: { _id: string }) => s._id === sid(token));
    expect(row).toMatchObject({ kind: 'full', institution: admin.twin!.id, user: { _id: member.user.id, email: member.user.email } });
    expect(body.total).toBeGreaterThanOrEqual(2);
    // Another twin's admin does not see it.
    const other = (await get('/api/admin/sessions?limit=100', otherAdminToken)).json();
    expect(other.data.some((s: { _id: string }) => s._id === sid(token))).toBe(false);
  });

  it('lists the sessions of the twin named by institutionId, refusing one the caller does not administer', async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const memberToken = await signIn(t.app, member.user.email);
    const elsewhere = await buildUser(db(), { role: 'admin' });
    const elsewhereToken = await signIn(t.app, elsewhere.user.email);
    const superAdmin = await buildUser(db(), { accountType: 'super' });
    const superToken = await signIn(t.app, superAdmin.user.email);
    const named = (await get(`/api/admin/sessions?limit=100&institutionId=${admin.twin!.id}`, superToken)).json();
    const listed = named.data.map((s: { _id: string }) => s._id);
    expect(listed).toContain(sid(memberToken));
    expect(listed).not.toContain(sid(elsewhereToken));
    expect(named.data.every((s: { institution: string }) => s.institution === admin.twin!.id)).toBe(true);
    expect((await get(`/api/admin/sessions?institutionId=${elsewhere.twin!.id}`, adminToken)).statusCode).toBe(403);
  });

  it('needs sessions.list', async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, member.user.email);
    expect((await get('/api/admin/sessions', token)).statusCode).toBe(403);
    const granted = await buildUser(db(), { twin: admin.twin, grants: ['sessions.list'] });
    expect((await get('/api/admin/sessions', await signIn(t.app, granted.user.email))).statusCode).toBe(200);
  });
});

describe('DELETE /api/admin/session/{id}', () => {
  it('revokes the session at once', async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, member.user.email);
    expect(await profileStatus(t.app, token)).toBe(200);
    expect((await del(`/api/admin/session/${sid(token)}`, adminToken)).statusCode).toBe(200);
    expect(await profileStatus(t.app, token)).toBe(401);
  });

  it("answers 404 for another twin's session and leaves it alone", async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, member.user.email);
    const response = await del(`/api/admin/session/${sid(token)}`, otherAdminToken);
    expect(response.statusCode).toBe(404);
    expect(await profileStatus(t.app, token)).toBe(200);
  });
});

describe('POST /api/admin/sessions/bulk-delete', () => {
  it('revokes the sessions of the twin and counts only those', async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const first = await signIn(t.app, member.user.email);
    const second = await signIn(t.app, member.user.email);
    const outsider = await buildUser(db());
    const foreign = await signIn(t.app, outsider.user.email);
    const response = await post(t.app, '/api/admin/sessions/bulk-delete', { ids: [sid(first), sid(second), sid(foreign), 'aaaaaaaaaaaaaaaaaaaaaaaa'] }, adminToken);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, changed: 2 });
    expect(await profileStatus(t.app, first)).toBe(401);
    expect(await profileStatus(t.app, second)).toBe(401);
    expect(await profileStatus(t.app, foreign)).toBe(200);
  });

  it('needs sessions.delete', async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, member.user.email);
    expect((await post(t.app, '/api/admin/sessions/bulk-delete', { ids: [sid(token)] }, token)).statusCode).toBe(403);
  });
});

describe('POST /api/admin/user/{userId}/mfa/reset', () => {
  async function enrolledMember(): Promise<{ person: BuiltUser; secret: string; token: string }> {
    const person = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, person.user.email);
    const { secret } = (await post(t.app, '/api/user/me/totp/setup', {}, token)).json();
    expect((await post(t.app, '/api/user/me/totp/confirm', { code: authenticatorCode(secret) }, token)).statusCode).toBe(200);
    return { person, secret, token };
  }

  it('removes the authenticator: the person signs in with an emailed code, sessions revoked', async () => {
    const { person, token } = await enrolledMember();
    const response = await post(t.app, `/api/admin/user/${person.user.id}/mfa/reset`, {}, adminToken);
    expect(response.statusCode).toBe(200);
    expect(await profileStatus(t.app, token)).toBe(401);
    const started = (await signInRaw(t.app, person.user.email, person.password)).json();
    expect(started).toMatchObject({ mfaRequired: true, mfaMethod: 'email', methods: ['email'] });
    const code = await mailedCode(smtp, person.user.email);
    const verified = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code });
    expect(verified.json().profile).toMatchObject({ mfaEnabled: true, mfaMethod: 'email' });
  });

  it("answers 404 for another twin's account and 403 for a member without users.edit", async () => {
    const { person, secret } = await enrolledMember();
    expect((await post(t.app, `/api/admin/user/${person.user.id}/mfa/reset`, {}, otherAdminToken)).statusCode).toBe(404);
    const member = await buildUser(db(), { twin: admin.twin });
    expect((await post(t.app, `/api/admin/user/${person.user.id}/mfa/reset`, {}, await signIn(t.app, member.user.email))).statusCode).toBe(403);
    // Untouched: the authenticator still signs in.
    const started = (await signInRaw(t.app, person.user.email, person.password)).json();
    expect(started.mfaMethod).toBe('totp');
    expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code: authenticatorCode(secret, 1) })).statusCode).toBe(200);
  });

  it('lets only a super admin reset a super admin', async () => {
    const superAdmin = await buildUser(db(), { twin: admin.twin, accountType: 'super' });
    expect((await post(t.app, `/api/admin/user/${superAdmin.user.id}/mfa/reset`, {}, adminToken)).statusCode).toBe(403);
    const root = await buildUser(db(), { accountType: 'super' });
    expect((await post(t.app, `/api/admin/user/${superAdmin.user.id}/mfa/reset`, {}, await signIn(t.app, root.user.email))).statusCode).toBe(200);
  });

  it('answers 400 for a malformed id and 404 for an unknown one', async () => {
    expect((await post(t.app, '/api/admin/user/123/mfa/reset', {}, adminToken)).statusCode).toBe(400);
    expect((await post(t.app, '/api/admin/user/aaaaaaaaaaaaaaaaaaaaaaaa/mfa/reset', {}, adminToken)).statusCode).toBe(404);
  });
});
