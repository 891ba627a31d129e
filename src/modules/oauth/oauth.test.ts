// Third-party sign-in against a real OpenID Connect provider (oidc-provider) on loopback: the whole
// browser-less flow, new and returning people, identities bound by issuer + subject, a failed state
// check, a replayed callback, a twin's own provider opening a launch session, and the branding flag.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { post } from '../../../test/support/identity.js';
import { startIdentityProvider, type TestIdentityProvider } from '../../../test/support/oidc-provider.js';
import { newId } from '../../platform/ids/ids.js';
import { findUserByEmail } from '../users/users.repo.js';
import { users } from '../users/users.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { oidcIdentities, ssoProviders } from './oauth.tables.js';
import { hasIdentityProvider } from './oauth.service.js';

const PUBLIC = 'http://127.0.0.1:4555';
const ssoId = newId();
let idp: TestIdentityProvider;
let t: TestApp;
let twin: TwinRow;

beforeAll(async () => {
  idp = await startIdentityProvider([
    { client_id: 'dt', client_secret: 'dt-secret', redirect_uris: [`${PUBLIC}/api/auth/oauth/school/callback`] },
    { client_id: 'twin-client', redirect_uris: [`${PUBLIC}/api/auth/oauth/${ssoId}/callback`] },
  ]);
  const providers = [
    { id: 'school', name: 'School Login', issuer: idp.issuer, clientId: 'dt', clientSecret: 'dt-secret' },
    { id: 'broken', name: 'Broken', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' },
  ];
  // The twin's own provider below is the loopback identity provider: the operator allows its host.
  t = await startTestApp({ env: { PUBLIC_URL: PUBLIC, OIDC_PROVIDERS: JSON.stringify(providers), OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
  twin = await buildTwin(t.platform.database.db);
  await t.platform.database.db.insert(ssoProviders).values({ id: ssoId, twinId: twin.id, name: 'Twin Login', issuer: idp.issuer, clientId: 'twin-client' });
});
afterAll(async () => {
  await t.close();
  await idp.close();
});

const db = () => t.platform.database.db;
let counter = 0;

async function providerCallback(provider: string, subject: string) {
  idp.signInAs(subject);
  const start = await t.app.inject({ method: 'GET', url: `/api/auth/oauth/${provider}` });
  expect(start.statusCode).toBe(302);
  const cookie = /dt_oauth=([^;]+)/.exec(String(start.headers['set-cookie']))![1];
  const callback = await idp.browse(String(start.headers.location), `${PUBLIC}/`);
  return { start, cookie, path: callback.pathname + callback.search };
}

const callbackWith = (path: string, cookie?: string) =>
  t.app.inject({ method: 'GET', url: path, headers: cookie ? { cookie: `other=1; dt_oauth=${cookie}` } : {} });

function newAccount(overrides: { email?: string } = {}) {
  const subject = `subject-${++counter}-${Date.now()}`;
  const email = overrides.email ?? `${subject}@idp.example.test`;
  idp.accounts.set(subject, { email, given_name: 'Ada', family_name: 'Byron' });
  return { subject, email };
}

describe('GET /api/auth/oauth/providers', () => {
  it("lists the deployment's providers, and a twin's own with its publicId, names only", async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/api/auth/oauth/providers' });
    expect(plain.json()).toEqual({ success: true, providers: [{ id: 'school', name: 'School Login' }, { id: 'broken', name: 'Broken' }] });
    const withTwin = await t.app.inject({ method: 'GET', url: `/api/auth/oauth/providers?publicId=${twin.publicId}` });
    expect(withTwin.json().providers).toContainEqual({ id: ssoId, name: 'Twin Login' });
    expect(withTwin.body).not.toContain('secret');
  });
});

describe('the sign-in flow', () => {
  it('redirects with PKCE (S256), state and nonce, and a browser-binding cookie', async () => {
    const { start } = await providerCallback('school', newAccount().subject);
    const location = new URL(String(start.headers.location));
    expect(location.origin).toBe(idp.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    for (const name of ['code_challenge', 'state', 'nonce']) expect(location.searchParams.get(name)).toBeTruthy();
    expect(location.searchParams.get('redirect_uri')).toBe(`${PUBLIC}/api/auth/oauth/school/callback`);
    expect(String(start.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Lax/);
  });

  it('signs a new person in, then finds the returning person by issuer and subject', async () => {
    const { subject, email } = newAccount();
    const first = await providerCallback('school', subject);
    const response = await callbackWith(first.path, first.cookie);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.profile).toMatchObject({ email, fname: 'Ada', lname: 'Byron' });
    expect((await post(t.app, '/api/user/refresh/profile', {}, body.token)).statusCode).toBe(200);
    const [identity] = await db().select().from(oidcIdentities).where(eq(oidcIdentities.userId, body.profile._id));
    expect(identity).toMatchObject({ provider: 'school', issuer: idp.issuer, subject });

    // Returning, even after the email changed at the provider.
    idp.accounts.set(subject, { email: `changed-${email}`, given_name: 'Ada' });
    const again = await providerCallback('school', subject);
    const returning = await callbackWith(again.path, again.cookie);
    expect(returning.statusCode).toBe(200);
    expect(returning.json().profile._id).toBe(body.profile._id);
  });

  it('never binds an existing account by email alone', async () => {
    const local = await buildUser(db());
    const { subject } = newAccount({ email: local.user.email });
    const flow = await providerCallback('school', subject);
    const response = await callbackWith(flow.path, flow.cookie);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ success: false, code: 'ACCOUNT_EXISTS' });
    expect(await db().select().from(oidcIdentities).where(eq(oidcIdentities.userId, local.user.id))).toHaveLength(0);
  });

  it('refuses a failed state check: tampered state, missing or foreign cookie', async () => {
    const { subject } = newAccount();
    const flow = await providerCallback('school', subject);
    const url = new URL(flow.path, PUBLIC);
    url.searchParams.set('state', 'tampered-state');
    const tampered = await callbackWith(url.pathname + url.search, flow.cookie);
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json().code).toBe('OAUTH_STATE_INVALID');

    const other = await providerCallback('school', subject);
    expect((await callbackWith(other.path)).statusCode).toBe(400);
    const third = await providerCallback('school', subject);
    const foreign = await callbackWith(third.path, other.cookie);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().code).toBe('OAUTH_STATE_INVALID');
  });

  it('refuses a replayed callback', async () => {
    const flow = await providerCallback('school', newAccount().subject);
    expect((await callbackWith(flow.path, flow.cookie)).statusCode).toBe(200);
    const replay = await callbackWith(flow.path, flow.cookie);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('OAUTH_STATE_INVALID');
  });

  it('refuses a code the provider does not confirm', async () => {
    const flow = await providerCallback('school', newAccount().subject);
    const url = new URL(flow.path, PUBLIC);
    url.searchParams.set('code', 'forged-code');
    const response = await callbackWith(url.pathname + url.search, flow.cookie);
    expect(response.statusCode).toBe(401);
    expect(response.json().code).toBe('OAUTH_FAILED');
  });

  it('asks for the second factor when the account has it on', async () => {
    const { subject, email } = newAccount();
    const flow = await providerCallback('school', subject);
    expect((await callbackWith(flow.path, flow.cookie)).statusCode).toBe(200);
    const user = (await findUserByEmail(db(), email))!;
    await db().update(users).set({ mfaEnabled: true, mfaMethod: 'email' }).where(eq(users.id, user.id));
    const again = await providerCallback('school', subject);
    const response = await callbackWith(again.path, again.cookie);
    expect(response.json()).toMatchObject({ mfaRequired: true, mfaMethod: 'email' });
    expect(response.json()).not.toHaveProperty('token');
  });

  it("opens a launch session in the twin through the twin's own provider", async () => {
    const { subject } = newAccount();
    const flow = await providerCallback(ssoId, subject);
    const response = await callbackWith(flow.path, flow.cookie);
    expect(response.statusCode).toBe(200);
    const { token, profile } = response.json();
    expect(profile.institution._id).toBe(twin.id);
    expect(profile.permissions).toEqual([]);
    const adminRoute = await t.app.inject({ method: 'GET', url: '/api/admin/sessions', headers: { 'x-access-token': token } });
    expect(adminRoute.statusCode).toBe(403);
    expect(adminRoute.json()).toMatchObject({ code: 'LAUNCH_SCOPE_STEP_UP', institutionId: twin.id });
  });

  it('answers 404 for an unknown provider and 502 for an unreachable one', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/oauth/nobody' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/oauth/aaaaaaaaaaaaaaaaaaaaaaaa' })).statusCode).toBe(404);
    const broken = await t.app.inject({ method: 'GET', url: '/api/auth/oauth/broken' });
    expect(broken.statusCode).toBe(502);
    expect(broken.json().code).toBe('OAUTH_PROVIDER_UNAVAILABLE');
  });
});

describe('hasIdentityProvider (the branding flag)', () => {
  it('is true only when a provider is configured for the deployment or the twin', async () => {
    expect(await hasIdentityProvider(db(), t.config)).toBe(true);
    const none = { oidcProviders: [] };
    expect(await hasIdentityProvider(db(), none)).toBe(false);
    expect(await hasIdentityProvider(db(), none, twin.id)).toBe(true);
    expect(await hasIdentityProvider(db(), none, (await buildTwin(db())).id)).toBe(false);
  });
});
