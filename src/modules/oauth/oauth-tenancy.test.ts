// Identities between twins, against a real OpenID Connect provider (oidc-provider) on loopback: two
// twins each register a provider record at the same issuer. A subject bound through one twin's record
// is another identity through the other's: it never signs in as the person bound first, nor adds them to
// the second twin. New accounts need the provider's email_verified: true. Rows made before identities had
// a provider record are taken up only by a record that may vouch for the person.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { startIdentityProvider, type TestAccount, type TestIdentityProvider } from '../../../test/support/oidc-provider.js';
import { newId } from '../../platform/ids/ids.js';
import { findMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findUserByEmail } from '../users/users.repo.js';
import { oidcIdentities, ssoProviders } from './oauth.tables.js';

const PUBLIC = 'http://127.0.0.1:4556';
const providerA = newId();
const providerB = newId();
let idp: TestIdentityProvider;
let t: TestApp;
let twinA: TwinRow;
let twinB: TwinRow;

beforeAll(async () => {
  idp = await startIdentityProvider([
    { client_id: 'deployment', client_secret: 'deployment-secret', redirect_uris: [`${PUBLIC}/api/auth/oauth/school/callback`] },
    { client_id: 'twin-a', redirect_uris: [`${PUBLIC}/api/auth/oauth/${providerA}/callback`] },
    { client_id: 'twin-b', redirect_uris: [`${PUBLIC}/api/auth/oauth/${providerB}/callback`] },
  ]);
  const providers = [{ id: 'school', name: 'School Login', issuer: idp.issuer, clientId: 'deployment', clientSecret: 'deployment-secret' }];
  t = await startTestApp({ env: { PUBLIC_URL: PUBLIC, OIDC_PROVIDERS: JSON.stringify(providers), OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
  twinA = await buildTwin(db());
  twinB = await buildTwin(db());
  await db()
    .insert(ssoProviders)
    .values([
      { id: providerA, twinId: twinA.id, name: 'Twin A Login', issuer: idp.issuer, clientId: 'twin-a' },
      { id: providerB, twinId: twinB.id, name: 'Twin B Login', issuer: idp.issuer, clientId: 'twin-b' },
    ]);
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const db = () => t.platform.database.db;
let counter = 0;

function account(overrides: TestAccount = {}) {
  const subject = `subject-${++counter}-${Date.now()}`;
  const email = overrides.email ?? `${subject}@idp.example.test`;
  idp.accounts.set(subject, { email, given_name: 'Ada', family_name: 'Byron', ...overrides });
  return { subject, email };
}

/** The whole browser-less flow through one provider record, as `subject`: the callback's answer. */
async function signInThrough(provider: string, subject: string) {
  idp.signInAs(subject);
  const start = await t.app.inject({ method: 'GET', url: `/api/auth/oauth/${provider}` });
  expect(start.statusCode).toBe(302);
  const cookie = /dt_oauth=([^;]+)/.exec(String(start.headers['set-cookie']))![1];
  const callback = await idp.browse(String(start.headers.location), `${PUBLIC}/`);
  return t.app.inject({ method: 'GET', url: callback.pathname + callback.search, headers: { cookie: `dt_oauth=${cookie}` } });
}

const identitiesOf = (userId: string) => db().select().from(oidcIdentities).where(eq(oidcIdentities.userId, userId));

describe("another twin's provider record at the same issuer", () => {
  it('does not sign in as the person bound through the first, nor add them to its twin', async () => {
    const { subject, email } = account();
    const first = await signInThrough(providerA, subject);
    expect(first.statusCode).toBe(200);
    const person = first.json().profile;
    expect(person.institution._id).toBe(twinA.id);
    expect(await identitiesOf(person._id)).toMatchObject([{ provider: providerA, issuer: idp.issuer, subject }]);

    const through = await signInThrough(providerB, subject);
    expect(through.statusCode).toBe(409);
    expect(through.json()).toEqual({ success: false, message: expect.any(String), code: 'ACCOUNT_EXISTS' });
    expect(through.body).not.toContain('token');
    expect(await findMembership(db(), person._id, twinB.id)).toBeUndefined();
    expect(await identitiesOf(person._id)).toHaveLength(1);
    expect((await findUserByEmail(db(), email))!.id).toBe(person._id);

    // Twin A's record still finds the person.
    const again = await signInThrough(providerA, subject);
    expect(again.statusCode).toBe(200);
    expect(again.json().profile._id).toBe(person._id);
  });

  it('makes another identity, another account, when the subject arrives with another address', async () => {
    const { subject } = account();
    const first = await signInThrough(providerA, subject);
    expect(first.statusCode).toBe(200);
    idp.accounts.set(subject, { email: `other-${subject}@idp.example.test`, given_name: 'Eve' });
    const through = await signInThrough(providerB, subject);
    expect(through.statusCode).toBe(200);
    const other = through.json().profile;
    expect(other._id).not.toBe(first.json().profile._id);
    expect(other.institution._id).toBe(twinB.id);
    expect(await findMembership(db(), first.json().profile._id, twinB.id)).toBeUndefined();
  });
});

describe('a new account needs email_verified: true', () => {
  for (const [label, verified] of [
    ['false', false],
    ['absent', null],
  ] as const) {
    it(`refuses, and creates no account, when the provider's email_verified is ${label}`, async () => {
      for (const provider of ['school', providerA]) {
        const { subject, email } = account({ email_verified: verified });
        const response = await signInThrough(provider, subject);
        expect(response.statusCode).toBe(403);
        expect(response.json()).toEqual({ success: false, message: expect.stringContaining('not confirmed'), code: 'OAUTH_EMAIL_NOT_VERIFIED' });
        expect(await findUserByEmail(db(), email)).toBeUndefined();
        expect(await db().select().from(oidcIdentities).where(eq(oidcIdentities.subject, subject))).toHaveLength(0);
      }
    });
  }

  it('still signs in a person bound before, whatever the claim says now', async () => {
    const { subject } = account();
    const first = await signInThrough('school', subject);
    expect(first.statusCode).toBe(200);
    idp.accounts.set(subject, { ...idp.accounts.get(subject), email_verified: false });
    const again = await signInThrough('school', subject);
    expect(again.statusCode).toBe(200);
    expect(again.json().profile._id).toBe(first.json().profile._id);
  });
});

describe('identities made before provider records were told apart', () => {
  async function legacyPerson() {
    const { subject } = account();
    const { user } = await buildUser(db(), { twin: twinA });
    idp.accounts.set(subject, { email: user.email });
    await db().insert(oidcIdentities).values({ userId: user.id, provider: null, issuer: idp.issuer, subject });
    return { subject, user };
  }

  it("are taken up by a deployment provider, and by the provider of the person's own twin", async () => {
    const { subject, user } = await legacyPerson();
    const deployment = await signInThrough('school', subject);
    expect(deployment.statusCode).toBe(200);
    expect(deployment.json().profile._id).toBe(user.id);
    const own = await signInThrough(providerA, subject);
    expect(own.statusCode).toBe(200);
    expect(own.json().profile._id).toBe(user.id);
    const bound = await db()
      .select({ provider: oidcIdentities.provider })
      .from(oidcIdentities)
      .where(and(eq(oidcIdentities.userId, user.id), eq(oidcIdentities.subject, subject)));
    expect(bound.map((row) => row.provider).sort()).toEqual([null, providerA, 'school'].sort());
  });

  it("are not found through the provider of a twin the person does not belong to", async () => {
    const { subject, user } = await legacyPerson();
    const through = await signInThrough(providerB, subject);
    expect(through.statusCode).toBe(409);
    expect(through.json().code).toBe('ACCOUNT_EXISTS');
    expect(await findMembership(db(), user.id, twinB.id)).toBeUndefined();
    expect(await identitiesOf(user.id)).toHaveLength(1);
  });
});
