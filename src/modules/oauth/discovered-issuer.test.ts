// A twin's sign-in provider must be the issuer it names. An attacker who administers one twin runs an
// OpenID provider (oidc-provider) whose discovery document, served at a URL containing /.well-known/
// (where openid-client skips its own issuer check), claims the issuer of another twin's provider: the
// save is refused, and a row pointed there anyway signs nobody in: no session, no person, no membership.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startIdentityProvider, type TestIdentityProvider } from '../../../test/support/oidc-provider.js';
import { newId } from '../../platform/ids/ids.js';
import { findMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { ssoProviders } from './oauth.tables.js';

const PUBLIC = 'http://127.0.0.1:4556';
const victimProviderId = newId();
const attackerProviderId = newId();
const VICTIM_SUBJECT = 'victim-subject';
let victimIdp: TestIdentityProvider;
let attackerIdp: TestIdentityProvider;
let t: TestApp;
let victimTwin: TwinRow;
let attackerTwin: TwinRow;
let attackerToken = '';
let victimUserId = '';

const callbackPath = (id: string) => `${PUBLIC}/api/auth/oauth/${id}/callback`;
const discoveryUrl = () => `${attackerIdp.issuer}/.well-known/openid-configuration`;
const db = () => t.platform.database.db;

async function start(providerId: string) {
  const response = await t.app.inject({ method: 'GET', url: `/api/auth/oauth/${providerId}` });
  const cookie = /dt_oauth=([^;]+)/.exec(String(response.headers['set-cookie'] ?? ''))?.[1];
  return { response, cookie };
}

const callback = (path: string, cookie: string) => t.app.inject({ method: 'GET', url: path, headers: { cookie: `dt_oauth=${cookie}` } });
const userCount = async () => (await db().select({ id: users.id }).from(users)).length;

beforeAll(async () => {
  victimIdp = await startIdentityProvider([{ client_id: 'victim-client', redirect_uris: [callbackPath(victimProviderId)] }]);
  attackerIdp = await startIdentityProvider([{ client_id: 'attacker-client', redirect_uris: [callbackPath(attackerProviderId)] }], {
    claimedIssuer: victimIdp.issuer,
  });
  // Both providers are loopback servers: the operator allows the host (the guard is not what this tests).
  t = await startTestApp({ env: { PUBLIC_URL: PUBLIC, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
  victimTwin = await buildTwin(db());
  attackerTwin = await buildTwin(db());
  attackerToken = await signIn(t.app, (await buildUser(db(), { twin: attackerTwin, role: 'admin' })).user.email);
  await db().insert(ssoProviders).values({ id: victimProviderId, twinId: victimTwin.id, name: 'Victim Login', issuer: victimIdp.issuer, clientId: 'victim-client' });

  // The victim signs in through their own twin's provider once.
  victimIdp.accounts.set(VICTIM_SUBJECT, { email: 'victim@victim.example.test', given_name: 'Vic' });
  victimIdp.signInAs(VICTIM_SUBJECT);
  const own = await start(victimProviderId);
  const back = await victimIdp.browse(String(own.response.headers.location), `${PUBLIC}/`);
  const signedIn = await callback(back.pathname + back.search, own.cookie!);
  expect(signedIn.statusCode).toBe(200);
  victimUserId = signedIn.json().profile._id;
  attackerIdp.accounts.set(VICTIM_SUBJECT, { email: 'victim@victim.example.test', given_name: 'Vic' });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await victimIdp?.close();
  await attackerIdp?.close();
});

describe("a provider whose discovery claims another provider's issuer", () => {
  it('is refused at save when its issuer is a discovery document URL (400 ISSUER_IS_DISCOVERY_URL)', async () => {
    const headers = { 'x-access-token': attackerToken };
    const created = await t.app.inject({ method: 'POST', url: '/api/admin/sso-provider', headers, payload: { name: 'Evil', issuer: discoveryUrl(), clientId: 'attacker-client' } });
    expect(created.statusCode).toBe(400);
    expect(created.json()).toMatchObject({ success: false, code: 'ISSUER_IS_DISCOVERY_URL' });
    const honest = await t.app.inject({ method: 'POST', url: '/api/admin/sso-provider', headers, payload: { name: 'Plain', issuer: victimIdp.issuer, clientId: 'attacker-client' } });
    expect(honest.statusCode).toBe(201);
    const moved = await t.app.inject({ method: 'PUT', url: `/api/admin/sso-provider/${honest.json().data._id}`, headers, payload: { issuer: discoveryUrl() } });
    expect(moved.json()).toMatchObject({ success: false, code: 'ISSUER_IS_DISCOVERY_URL' });
  });

  it('starts no sign-in through a row pointed at that discovery document anyway', async () => {
    const id = newId();
    await db().insert(ssoProviders).values({ id, twinId: attackerTwin.id, name: 'Evil', issuer: discoveryUrl(), clientId: 'attacker-client' });
    const { response } = await start(id);
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ success: false, code: 'OAUTH_PROVIDER_UNAVAILABLE' });
  });

  it('starts no sign-in through its own URL either (the discovered issuer is not the configured one)', async () => {
    const id = newId();
    await db().insert(ssoProviders).values({ id, twinId: attackerTwin.id, name: 'Evil root', issuer: attackerIdp.issuer, clientId: 'attacker-client' });
    expect((await start(id)).response.statusCode).toBe(502);
  });

  it("completes no callback: the victim is not signed in, not added to the attacker's twin, and no person is made", async () => {
    // A sign-in started while the row named the victim's issuer, then the row moved to the attacker's
    // discovery document and the attacker's provider answered with a token claiming the victim's issuer and subject.
    await db().insert(ssoProviders).values({ id: attackerProviderId, twinId: attackerTwin.id, name: 'Evil', issuer: victimIdp.issuer, clientId: 'attacker-client' });
    const started = await start(attackerProviderId);
    expect(started.response.statusCode).toBe(302);
    await db().update(ssoProviders).set({ issuer: discoveryUrl() }).where(eq(ssoProviders.id, attackerProviderId));
    const atAttacker = new URL(String(started.response.headers.location));
    const authorize = new URL(`${atAttacker.pathname}${atAttacker.search}`, attackerIdp.issuer);
    attackerIdp.signInAs(VICTIM_SUBJECT);
    const back = await attackerIdp.browse(authorize.href, `${PUBLIC}/`);
    expect(back.searchParams.get('code')).toBeTruthy();
    const people = await userCount();

    const response = await callback(back.pathname + back.search, started.cookie!);
    expect(response.statusCode).not.toBe(200);
    expect(response.json()).toMatchObject({ success: false });
    expect(response.body).not.toContain('token');
    expect(await findMembership(db(), victimUserId, attackerTwin.id)).toBeFalsy();
    expect(await userCount()).toBe(people);
  });
});
