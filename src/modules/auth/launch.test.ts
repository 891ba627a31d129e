// Launch tokens and the launch scope (behaviour 16): signing, single use, a session restricted to one
// twin, the allow-list checked route by route over every registered route, and the step-up by code.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { mailedCode, post, profileStatus } from '../../../test/support/identity.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';
import { findMembership } from '../twins/twins.repo.js';
import { findUserByEmail } from '../users/users.repo.js';
import { launchTokens } from './identity.tables.js';
import { isLaunchScopeRoute, LAUNCH_SCOPE_ALLOW_LIST } from './launch-scope.js';

let t: TestApp;
let smtp: TestSmtpServer;
let admin: BuiltUser;
let adminToken: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({
    env: { SMTP_URL: smtp.url },
    beforeReady: (app) => {
      // Stand-ins at allow-listed and refused paths, only while their families are not built yet.
      const standIn = (method: 'GET' | 'POST', url: string) => {
        if (!app.hasRoute({ method, url })) app.route({ method, url, handler: async () => ({ success: true }) });
      };
      standIn('POST', '/api/ai/personal/qanda');
      standIn('GET', '/api/user/history');
      standIn('GET', '/api/admin/test-only/users');
      standIn('GET', '/api/user/institutions');
    },
  });
  admin = await buildUser(t.platform.database.db, { role: 'admin' });
  adminToken = await signIn(t.app, admin.user.email);
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const db = () => t.platform.database.db;
let counter = 0;
const newEmail = () => `launched-${++counter}-${Date.now()}@example.test`;

async function launchToken(email = newEmail(), body: object = {}) {
  const response = await post(t.app, '/api/auth/sdk-sign', { email, fname: 'Grace', lname: 'Hopper', ...body }, adminToken);
  expect(response.statusCode).toBe(200);
  return { email, token: response.json().token as string };
}

async function launchSession(email?: string) {
  const { token, email: address } = await launchToken(email);
  const response = await post(t.app, '/api/auth/sdk-verify', { token });
  expect(response.statusCode).toBe(200);
  return { email: address, session: response.json().token as string, body: response.json() };
}

describe('POST /api/auth/sdk-sign', () => {
  it('is for administrators of the current twin', async () => {
    const member = await buildUser(db(), { twin: admin.twin });
    const token = await signIn(t.app, member.user.email);
    const response = await post(t.app, '/api/auth/sdk-sign', { email: newEmail() }, token);
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('NOT_TWIN_ADMIN');
    expect((await post(t.app, '/api/auth/sdk-sign', { email: newEmail() })).statusCode).toBe(401);
  });

  it('refuses a role other than user and a lifetime over an hour', async () => {
    expect((await post(t.app, '/api/auth/sdk-sign', { email: newEmail(), role: 'admin' }, adminToken)).statusCode).toBe(400);
    expect((await post(t.app, '/api/auth/sdk-sign', { email: newEmail(), expiresIn: 7200 }, adminToken)).statusCode).toBe(400);
  });
});

describe('POST /api/auth/sdk-verify', () => {
  it('opens a session restricted to the twin, creating the person as a user there', async () => {
    const { email, body } = await launchSession();
    expect(body.launchScope).toBe(true);
    expect(body.profile).toMatchObject({ email, fname: 'Grace', lname: 'Hopper', permissions: [] });
    expect(body.profile.institution._id).toBe(admin.twin!.id);
    const user = (await findUserByEmail(db(), email))!;
    expect((await findMembership(db(), user.id, admin.twin!.id))?.role).toBe('user');
  });

  it('gives an administrator only user rights in that twin', async () => {
    const otherAdmin = await buildUser(db(), { role: 'admin', twin: admin.twin });
    const { session, body } = await launchSession(otherAdmin.user.email);
    expect(body.profile.permissions).toEqual([]);
    const refreshed = await post(t.app, '/api/user/refresh/profile', {}, session);
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().profile.permissions).toEqual([]);
    const reset = await post(t.app, `/api/admin/user/${admin.user.id}/mfa/reset`, {}, session);
    expect(reset.statusCode).toBe(403);
    expect(reset.json()).toMatchObject({ code: 'LAUNCH_SCOPE_STEP_UP', institutionId: admin.twin!.id });
  });

  it('accepts a token once, and not after it expires', async () => {
    const { token } = await launchToken();
    expect((await post(t.app, '/api/auth/sdk-verify', { token })).statusCode).toBe(200);
    const replay = await post(t.app, '/api/auth/sdk-verify', { token });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().code).toBe('INVALID_LAUNCH_TOKEN');
    const { email, token: late } = await launchToken();
    await db().update(launchTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(launchTokens.email, email));
    expect((await post(t.app, '/api/auth/sdk-verify', { token: late })).statusCode).toBe(401);
    expect((await post(t.app, '/api/auth/sdk-verify', { token: 'lt_forged' })).statusCode).toBe(401);
  });
});

describe('the launch scope', () => {
  it('answers LAUNCH_SCOPE_STEP_UP on an admin route and not on a chat route', async () => {
    const { session } = await launchSession();
    const adminRoute = await t.app.inject({ method: 'GET', url: '/api/admin/test-only/users', headers: { 'x-access-token': session } });
    expect(adminRoute.statusCode).toBe(403);
    expect(adminRoute.json()).toEqual({
      success: false,
      message: expect.any(String),
      code: 'LAUNCH_SCOPE_STEP_UP',
      institutionId: admin.twin!.id,
    });
    const chat = await post(t.app, '/api/ai/personal/qanda', { inputs: ['hi'] }, session);
    expect(chat.statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/user/history', headers: { 'x-access-token': session } })).statusCode).toBe(200);
    // Listing one's twins reaches beyond this twin.
    expect((await t.app.inject({ method: 'GET', url: '/api/user/institutions', headers: { 'x-access-token': session } })).json().code).toBe(
      'LAUNCH_SCOPE_STEP_UP',
    );
  });

  it('holds route by route over every registered route: allow-listed work passes, the rest answers 403', async () => {
    const { session } = await launchSession();
    const routes = t.app
      .printRoutes({ commonPrefix: false })
      .split('\n')
      .map((line) => /^[├└]── (\/api\/\S+) \(([^)]+)\)/.exec(line))
      .filter((match): match is RegExpExecArray => Boolean(match))
      .flatMap(([, url, methods]) => methods.split(', ').filter((m) => m !== 'HEAD' && m !== 'OPTIONS').map((method) => ({ method, url })))
      .filter(({ url }) => !url.includes('*'))
      // Sign-out last: it ends the session.
      .sort((a, b) => Number(a.url === '/api/auth/signout') - Number(b.url === '/api/auth/signout'));
    expect(routes.length).toBeGreaterThan(15);
    for (const { method, url } of routes) {
      const path = url.replace(/:[A-Za-z]+/g, 'aaaaaaaaaaaaaaaaaaaaaaaa');
      const inject = (headers: Record<string, string>) =>
        t.app.inject({ method: method as 'GET', url: path, headers, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }) });
      const anonymous = await inject({});
      const needsSession = anonymous.statusCode === 401 && anonymous.json().message === 'Authentication Required';
      const response = await inject({ 'x-access-token': session });
      const stepUp = response.statusCode === 403 && response.json().code === 'LAUNCH_SCOPE_STEP_UP';
      const expected = needsSession && !isLaunchScopeRoute(`${method} ${url}`);
      expect({ route: `${method} ${url}`, stepUp }).toEqual({ route: `${method} ${url}`, stepUp: expected });
    }
  });

  it('names each allowed route once, by method and pattern', () => {
    expect(new Set(LAUNCH_SCOPE_ALLOW_LIST).size).toBe(LAUNCH_SCOPE_ALLOW_LIST.length);
    for (const entry of LAUNCH_SCOPE_ALLOW_LIST) expect(entry).toMatch(/^(GET|POST|PUT|PATCH|DELETE) \/api\/\S+$/);
    expect(LAUNCH_SCOPE_ALLOW_LIST.some((entry) => entry.includes('/api/admin/'))).toBe(false);
  });

  it('becomes a full session after challenge, resend and verify', async () => {
    const { session, email } = await launchSession();
    const challenge = await post(t.app, '/api/user/launch-scope/challenge', {}, session);
    expect(challenge.statusCode).toBe(200);
    expect(challenge.json()).toMatchObject({ success: true, mfaMethod: 'email', mfaToken: expect.any(String) });
    const first = await mailedCode(smtp, email);
    expect((await post(t.app, '/api/auth/mfa-resend', {}, session)).statusCode).toBe(200);
    const code = await mailedCode(smtp, email);
    if (code !== first) expect((await post(t.app, '/api/auth/mfa-verify', { code: first }, session)).statusCode).toBe(400);
    const verified = await post(t.app, '/api/auth/mfa-verify', { code }, session);
    expect(verified.statusCode).toBe(200);
    const full = verified.json().token as string;
    expect(verified.json().profile.institution._id).toBe(admin.twin!.id);
    // The launch token stops; the full session is not confined.
    expect(await profileStatus(t.app, session)).toBe(401);
    const adminRoute = await t.app.inject({ method: 'GET', url: '/api/admin/test-only/users', headers: { 'x-access-token': full } });
    expect(adminRoute.statusCode).toBe(200);
    expect((await post(t.app, '/api/user/me/totp/setup', {}, full)).statusCode).toBe(200);
  });

  it('refuses the step-up with a wrong code and for a full session', async () => {
    const { session, email } = await launchSession();
    await post(t.app, '/api/user/launch-scope/challenge', {}, session);
    const code = await mailedCode(smtp, email);
    const wrong = await post(t.app, '/api/auth/mfa-verify', { code: code === '000000' ? '111111' : '000000' }, session);
    expect(wrong.statusCode).toBe(400);
    expect(await profileStatus(t.app, session)).toBe(200);
    const notLaunch = await post(t.app, '/api/user/launch-scope/challenge', {}, adminToken);
    expect(notLaunch.statusCode).toBe(400);
    expect(notLaunch.json().code).toBe('NOT_LAUNCH_SESSION');
  });

  it('confines the session to its twin even when the person works in another', async () => {
    const elsewhere = await buildTwin(db());
    const person = await buildUser(db(), { twin: elsewhere });
    const { body } = await launchSession(person.user.email);
    expect(body.profile.institution._id).toBe(admin.twin!.id);
  });
});
