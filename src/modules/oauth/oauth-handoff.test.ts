// The provider's callback loaded as a page (a browser coming back from the provider): the outcome goes to
// the web client's /signin/oauth through a sealed, short-lived cookie, collected by POST
// /api/auth/oauth/handoff (which clears it). Against a real OpenID Connect provider (oidc-provider) on loopback.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { post } from '../../../test/support/identity.js';
import { startIdentityProvider, type TestIdentityProvider } from '../../../test/support/oidc-provider.js';
import { findUserByEmail } from '../users/users.repo.js';
import { users } from '../users/users.tables.js';
import { HANDOFF_TTL_MS, sealOutcome } from './oauth.handoff.js';

const PUBLIC = 'http://127.0.0.1:4556';
const PAGE = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
let idp: TestIdentityProvider;
let t: TestApp;
/** A built web client of the test's own (web/dist may or may not be built when this file runs). */
const webClientDir = mkdtempSync(path.join(os.tmpdir(), 'dt-web-'));
writeFileSync(path.join(webClientDir, 'index.html'), '<!doctype html><title>Digital Twin</title>');
let counter = 0;
/** The service's settings with the test's provider. */
const providerEnv = () => ({ PUBLIC_URL: PUBLIC, OIDC_PROVIDERS: JSON.stringify([{ id: 'school', name: 'School Login', issuer: idp.issuer, clientId: 'dt', clientSecret: 'dt-secret' }]) });

beforeAll(async () => {
  idp = await startIdentityProvider([{ client_id: 'dt', client_secret: 'dt-secret', redirect_uris: [`${PUBLIC}/api/auth/oauth/school/callback`] }]);
  t = await startTestApp({ env: providerEnv(), webClientDir });
});
afterAll(async () => {
  await t.close();
  await idp.close();
  rmSync(webClientDir, { recursive: true, force: true });
});

function newAccount() {
  const subject = `handoff-${++counter}-${Date.now()}`;
  const email = `${subject}@idp.example.test`;
  idp.accounts.set(subject, { email, given_name: 'Grace', family_name: 'Hopper' });
  return { subject, email };
}

/** Starts a sign-in for `subject` and follows the provider back: the callback's path and the binding cookie. */
async function returnFromProvider(subject: string, app = t.app) {
  idp.signInAs(subject);
  const start = await app.inject({ method: 'GET', url: '/api/auth/oauth/school' });
  const binding = /dt_oauth=([^;]+)/.exec(String(start.headers['set-cookie']))![1];
  const back = await idp.browse(String(start.headers.location), `${PUBLIC}/`);
  return { path: back.pathname + back.search, binding };
}

const cookiesOf = (response: { headers: Record<string, unknown> }) => ([] as string[]).concat((response.headers['set-cookie'] as string | string[]) ?? []);
const handoffCookieOf = (response: { headers: Record<string, unknown> }) => /dt_oauth_handoff=([^;]*)/.exec(cookiesOf(response).join('\n'))?.[1];

const loadPage = (path: string, binding: string | undefined, headers: Record<string, string> = PAGE) =>
  t.app.inject({ method: 'GET', url: path, headers: { ...headers, ...(binding ? { cookie: `dt_oauth=${binding}` } : {}) } });

const collect = (sealed: string | undefined, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/auth/oauth/handoff', headers: { ...headers, ...(sealed ? { cookie: `dt_oauth_handoff=${sealed}` } : {}) } });

describe('the callback loaded as a page', () => {
  it('sends the browser on to /signin/oauth with the session sealed in a cookie, cleared when collected', async () => {
    const { subject, email } = newAccount();
    const flow = await returnFromProvider(subject);
    const page = await loadPage(flow.path, flow.binding);
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/signin/oauth');
    expect(page.body).not.toMatch(/token/i);
    const cookies = cookiesOf(page);
    expect(cookies).toContainEqual(expect.stringMatching(/^dt_oauth=; Path=\/api\/auth\/oauth; HttpOnly; SameSite=Lax; Max-Age=0/));
    expect(cookies).toContainEqual(expect.stringMatching(new RegExp(`^dt_oauth_handoff=v1\\.[^;]+; Path=/api/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=${HANDOFF_TTL_MS / 1000}`)));
    const sealed = handoffCookieOf(page)!;
    // The cookie is sealed: neither the token nor the email can be read from it.
    expect(Buffer.from(sealed.split('.')[3], 'base64url').toString('utf8')).not.toContain('token');

    const collected = await collect(sealed, { origin: PUBLIC });
    expect(collected.statusCode).toBe(200);
    expect(Object.keys(collected.json()).sort()).toEqual(['success', 'token']);
    expect(handoffCookieOf(collected)).toBe('');
    const profile = await post(t.app, '/api/user/refresh/profile', {}, collected.json().token);
    expect(profile.statusCode).toBe(200);
    expect(profile.json().profile).toMatchObject({ email, fname: 'Grace', lname: 'Hopper' });

    // The provider's answer cannot be used again: loaded again, the page hands over the used state's failure.
    const again = await collect(handoffCookieOf(await loadPage(flow.path, flow.binding)));
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('OAUTH_STATE_INVALID');
  });

  it('tells a page load from a program by Sec-Fetch-Mode, else by Accept', async () => {
    const navigate = await returnFromProvider(newAccount().subject);
    const byMode = await loadPage(navigate.path, navigate.binding, { 'sec-fetch-mode': 'navigate' });
    expect(byMode.statusCode).toBe(303);

    const fetched = await returnFromProvider(newAccount().subject);
    const byProgram = await loadPage(fetched.path, fetched.binding, { 'sec-fetch-mode': 'cors', ...PAGE });
    expect(byProgram.statusCode).toBe(200);
    expect(byProgram.json()).toHaveProperty('token');
    expect(handoffCookieOf(byProgram)).toBeUndefined();

    const plain = await returnFromProvider(newAccount().subject);
    const json = await loadPage(plain.path, plain.binding, { accept: 'application/json' });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toHaveProperty('profile');
  });

  it('hands a failure over with its status, code and message', async () => {
    const flow = await returnFromProvider(newAccount().subject);
    // The browser lost its binding cookie: the state check fails.
    const page = await loadPage(flow.path, undefined);
    expect(page.statusCode).toBe(303);
    const collected = await collect(handoffCookieOf(page));
    expect(collected.statusCode).toBe(400);
    expect(collected.json()).toEqual({ success: false, code: 'OAUTH_STATE_INVALID', message: 'This sign-in request is invalid, used or expired; start again' });

    const forged = await returnFromProvider(newAccount().subject);
    const url = new URL(forged.path, PUBLIC);
    url.searchParams.set('code', 'forged-code');
    const unconfirmed = await collect(handoffCookieOf(await loadPage(url.pathname + url.search, forged.binding)));
    expect(unconfirmed.statusCode).toBe(401);
    expect(unconfirmed.json().code).toBe('OAUTH_FAILED');
  });

  it('hands over the second-factor challenge when the account has it on', async () => {
    const { subject, email } = newAccount();
    const first = await returnFromProvider(subject);
    expect((await collect(handoffCookieOf(await loadPage(first.path, first.binding)))).statusCode).toBe(200);
    const user = (await findUserByEmail(t.platform.database.db, email))!;
    await t.platform.database.db.update(users).set({ mfaEnabled: true, mfaMethod: 'email' }).where(eq(users.id, user.id));

    const again = await returnFromProvider(subject);
    const collected = await collect(handoffCookieOf(await loadPage(again.path, again.binding)));
    expect(collected.statusCode).toBe(200);
    expect(collected.json()).toMatchObject({ success: true, mfaRequired: true, mfaMethod: 'email', methods: expect.arrayContaining(['email']) });
    expect(collected.json()).not.toHaveProperty('token');
    // The challenge is a real pending sign-in: resending its code works.
    expect((await post(t.app, '/api/auth/mfa-resend', { mfaToken: collected.json().mfaToken })).statusCode).toBe(200);
  });
});

describe('a deployment that serves no web client', () => {
  it('answers a page load with the JSON a program gets: there is no /signin/oauth to go on to', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'dt-web-'));
    const apiOnly = await startTestApp({ env: providerEnv(), webClientDir: empty });
    try {
      const { subject, email } = newAccount();
      const flow = await returnFromProvider(subject, apiOnly.app);
      const page = await apiOnly.app.inject({ method: 'GET', url: flow.path, headers: { ...PAGE, 'sec-fetch-mode': 'navigate', cookie: `dt_oauth=${flow.binding}` } });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^application\/json/);
      expect(page.json().profile).toMatchObject({ email });
      expect(handoffCookieOf(page)).toBeUndefined();
      expect((await apiOnly.app.inject({ method: 'GET', url: '/signin/oauth', headers: PAGE })).statusCode).toBe(404);
    } finally {
      await apiOnly.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('POST /api/auth/oauth/handoff', () => {
  const invalid = { success: false, code: 'OAUTH_HANDOFF_INVALID', message: 'No sign-in to collect: it was collected already, or it expired; start again' };

  it('answers 400 OAUTH_HANDOFF_INVALID without a cookie, with an altered one, or an expired one', async () => {
    const none = await collect(undefined);
    expect(none.statusCode).toBe(400);
    expect(none.json()).toEqual(invalid);

    const flow = await returnFromProvider(newAccount().subject);
    const sealed = handoffCookieOf(await loadPage(flow.path, flow.binding))!;
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3], 'base64url');
    flipped[0] ^= 1;
    const altered = await collect([...parts.slice(0, 3), flipped.toString('base64url')].join('.'));
    expect(altered.statusCode).toBe(400);
    expect(altered.json()).toEqual(invalid);
    expect((await collect('not-sealed-at-all')).json()).toEqual(invalid);

    const expired = sealOutcome(t.platform.secrets, { kind: 'signed-in', token: 'x' }, Date.now() - HANDOFF_TTL_MS - 1);
    expect((await collect(expired)).json()).toEqual(invalid);
    // The genuine one still works.
    expect((await collect(sealed)).statusCode).toBe(200);
  });

  it("refuses a page of another origin (403 OAUTH_HANDOFF_ORIGIN), and keeps the outcome for the service's own", async () => {
    const flow = await returnFromProvider(newAccount().subject);
    const sealed = handoffCookieOf(await loadPage(flow.path, flow.binding))!;
    const foreign = await collect(sealed, { origin: 'http://other.127.0.0.1.nip.io:4556' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ success: false, code: 'OAUTH_HANDOFF_ORIGIN' });
    expect(handoffCookieOf(foreign)).toBeUndefined();
    expect((await collect(sealed, { origin: PUBLIC })).statusCode).toBe(200);
  });
});
