// LTI 1.3 launches from a platform simulated on loopback (its own RSA keys and JWKS, id_tokens signed
// with jose): the login keeps state and nonce on the service, a good launch opens a launch session in
// the twin listing the course (403 LAUNCH_SCOPE_STEP_UP outside it until the mailed code), and each
// check refuses with its code: replays, a wrong aud, an unknown deployment, an expired token, an unknown
// course, a foreign signature; a key rotated on the platform is accepted after the refetch.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { mailedCode, post } from '../../../test/support/identity.js';
import { startLtiPlatform, type TestLtiPlatform } from '../../../test/support/lti-platform.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';
import { updateTwin } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findMembership } from '../twins/twins.repo.js';
import { findUserByEmail } from '../users/users.repo.js';

const PUBLIC_URL = 'https://twins.example';
const CLIENT_ID = 'twin-tool';
const DEPLOYMENT = 'dep-1';
const COURSE = 'course-101';

let t: TestApp;
let smtp: TestSmtpServer;
let lms: TestLtiPlatform;
let twin: TwinRow;
let otherTwin: TwinRow;
let adminToken = '';
let webClientDir = '';
const db = () => t.platform.database.db;

beforeAll(async () => {
  smtp = await startSmtpServer();
  lms = await startLtiPlatform({ clientId: CLIENT_ID, deploymentId: DEPLOYMENT, contextId: COURSE });
  // A built web client stand-in: its page is what /lti/{publicId} serves.
  webClientDir = mkdtempSync(path.join(os.tmpdir(), 'dt-web-'));
  writeFileSync(path.join(webClientDir, 'index.html'), '<!doctype html><title>Web client</title>');
  t = await startTestApp({ env: { SMTP_URL: smtp.url, PUBLIC_URL, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, webClientDir });
  twin = (await updateTwin(db(), (await buildTwin(db())).id, { ltiContextIds: [COURSE, 'course-102'] }))!;
  // Another twin lists a course id of its own; the platform is not registered there.
  otherTwin = (await updateTwin(db(), (await buildTwin(db())).id, { ltiContextIds: ['course-202'] }))!;
  adminToken = await signIn(t.app, (await buildUser(db(), { twin, role: 'admin' })).user.email);
  const registered = await post(
    t.app,
    '/api/admin/lti-platform',
    { issuer: lms.issuer, clientId: CLIENT_ID, authLoginUrl: lms.authLoginUrl, jwksUrl: lms.jwksUrl, deploymentIds: [DEPLOYMENT] },
    adminToken,
  );
  expect(registered.statusCode).toBe(201);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await lms?.close();
  await smtp?.close();
  if (webClientDir) rmSync(webClientDir, { recursive: true, force: true });
});

const form = (fields: Record<string, string>) => ({
  payload: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

/** The platform's login initiation, as a browser form post: the tool's redirect, read by the platform. */
async function login(fields: Record<string, string> = {}) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/lti/login',
    ...form({ iss: lms.issuer, login_hint: 'user-1', target_link_uri: `${PUBLIC_URL}/api/lti/launch`, client_id: CLIENT_ID, lti_deployment_id: DEPLOYMENT, ...fields }),
  });
  expect(response.statusCode, response.body).toBe(302);
  return lms.authorize(response.headers.location as string);
}

function launch(state: string, idToken: string) {
  return t.app.inject({ method: 'POST', url: '/api/lti/launch', ...form({ state, id_token: idToken }) });
}

let people = 0;
/** A whole launch for a new person (unless claims say otherwise). */
async function launchAs(overrides: Record<string, unknown> = {}, signing?: Parameters<TestLtiPlatform['idToken']>[2]) {
  const auth = await login();
  const n = ++people;
  const token = await lms.idToken(auth.nonce, { sub: `lms-user-${n}-${Date.now()}`, email: `learner-${n}-${Date.now()}@school.example`, ...overrides }, signing);
  return { auth, token, response: await launch(auth.state, token) };
}

const sessionOf = (html: string) => JSON.parse(/var token = ("[^"]+");/.exec(html)![1]) as string;
const refusal = (response: { statusCode: number; json(): { code?: string } }) => ({ status: response.statusCode, code: response.json().code });

describe('LTI login', () => {
  it('redirects to the platform with the OIDC request, keeping state and nonce on the service (no cookie)', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/lti/login',
      ...form({ iss: lms.issuer, login_hint: 'hint-7', lti_message_hint: 'msg-9', target_link_uri: `${PUBLIC_URL}/x`, client_id: CLIENT_ID }),
    });
    expect(response.statusCode).toBe(302);
    expect(response.headers['set-cookie']).toBeUndefined();
    const { params } = lms.authorize(response.headers.location as string);
    expect(Object.fromEntries(params)).toMatchObject({
      response_type: 'id_token',
      response_mode: 'form_post',
      scope: 'openid',
      prompt: 'none',
      client_id: CLIENT_ID,
      redirect_uri: `${PUBLIC_URL}/api/lti/launch`,
      login_hint: 'hint-7',
      lti_message_hint: 'msg-9',
    });
    expect(params.get('state')).toMatch(/^\S{32,}$/);
    expect(params.get('nonce')).toMatch(/^\S{32,}$/);
    const byGet = await t.app.inject({ method: 'GET', url: `/api/lti/login?${new URLSearchParams({ iss: lms.issuer, login_hint: 'h', target_link_uri: PUBLIC_URL })}` });
    expect(byGet.statusCode).toBe(302);
    expect(lms.authorize(byGet.headers.location as string).state).not.toBe(params.get('state'));
  });

  it('refuses an unregistered issuer, client id or deployment, and a login without its fields', async () => {
    const unregistered: Record<string, string>[] = [{ iss: 'https://other-lms.example' }, { client_id: 'someone-else' }, { lti_deployment_id: 'dep-9' }];
    for (const fields of unregistered) {
      const response = await t.app.inject({ method: 'POST', url: '/api/lti/login', ...form({ iss: lms.issuer, login_hint: 'h', target_link_uri: PUBLIC_URL, ...fields }) });
      expect(refusal(response)).toEqual({ status: 401, code: 'LTI_UNKNOWN_DEPLOYMENT' });
    }
    const missing = await t.app.inject({ method: 'POST', url: '/api/lti/login', ...form({ iss: lms.issuer }) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ success: false, code: 'VALIDATION_FAILED' });
  });
});

describe('LTI launch', () => {
  it('opens a launch session in the twin listing the course: a frameable page, lxp_* filled, step-up by mailed code', async () => {
    const email = `ada-${Date.now()}@school.example`;
    const { response } = await launchAs({ email, [`https://purl.imsglobal.org/spec/lti/claim/roles`]: ['http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor'] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.headers['x-frame-options']).toBeUndefined();
    expect(response.headers['set-cookie']).toBeUndefined();
    const platformOrigin = new URL(lms.issuer).origin;
    expect(response.headers['content-security-policy']).toContain(`frame-ancestors 'self' ${platformOrigin}`);
    expect(response.headers['content-security-policy']).toContain("script-src 'nonce-");
    const session = sessionOf(response.body);
    expect(response.body).toContain(`var chat = "/lti/${twin.publicId}";`);

    // The chat it opens is the web client's page, framable by the same origins (the client's own page is not).
    const chat = await t.app.inject({ method: 'GET', url: `/lti/${twin.publicId}` });
    expect(chat.statusCode).toBe(200);
    expect(chat.body).toContain('<title>Web client</title>');
    expect(chat.headers['x-frame-options']).toBeUndefined();
    expect(chat.headers['content-security-policy']).toContain(`frame-ancestors 'self' ${platformOrigin}`);
    expect(chat.headers['content-security-policy']).toContain("script-src 'self'");
    const elsewhere = await t.app.inject({ method: 'GET', url: `/lti/${otherTwin.publicId}` });
    expect(elsewhere.headers['content-security-policy']).toMatch(/frame-ancestors 'self'$/);
    expect((await t.app.inject({ method: 'GET', url: '/lti/6f1c1f9e-8a5b-4c8e-9a51-7d1f0b0c1d2e' })).statusCode).toBe(404);

    const profile = await post(t.app, '/api/user/refresh/profile', {}, session);
    expect(profile.statusCode).toBe(200);
    expect(profile.json().profile ?? profile.json()).toMatchObject({ email, fname: 'Ada', lname: 'Lovelace', permissions: [] });
    expect(profile.json().profile ?? profile.json()).toMatchObject({
      lxp_partner_id: 'school-lms-guid',
      lxp_partner_name: 'School LMS',
      lxp_role_name: 'Instructor',
      lxp_role_id: 2,
      lxp_user_type: 2,
    });
    const person = (await findUserByEmail(db(), email))!;
    expect(person.external.lxp_user_id).toMatch(/^lms-user-/);
    expect(await findMembership(db(), person.id, twin.id)).toMatchObject({ role: 'user' });

    const outside = await t.app.inject({ method: 'GET', url: '/api/admin/lti-platforms', headers: { 'x-access-token': session } });
    expect(outside.statusCode).toBe(403);
    expect(outside.json()).toMatchObject({ code: 'LAUNCH_SCOPE_STEP_UP', institutionId: twin.id });

    expect((await post(t.app, '/api/user/launch-scope/challenge', {}, session)).statusCode).toBe(200);
    const verified = await post(t.app, '/api/auth/mfa-verify', { code: await mailedCode(smtp, email) }, session);
    expect(verified.statusCode).toBe(200);
    const full = verified.json().token as string;
    expect(verified.json().profile.institution._id).toBe(twin.id);
    // A user of the twin now, with a full session: past the launch scope (a user's 403 is not the step-up).
    const after = await t.app.inject({ method: 'GET', url: '/api/admin/lti-platforms', headers: { 'x-access-token': full } });
    expect(after.json().code).not.toBe('LAUNCH_SCOPE_STEP_UP');
  });

  it('an administrator of the twin arriving from the course has user rights until the step-up', async () => {
    const admin = await buildUser(db(), { twin, role: 'admin' });
    const { response } = await launchAs({ email: admin.user.email.toUpperCase() });
    expect(response.statusCode, response.body).toBe(200);
    const session = sessionOf(response.body);
    const adminRoute = await t.app.inject({ method: 'GET', url: '/api/admin/lti-platforms', headers: { 'x-access-token': session } });
    expect(adminRoute.json()).toMatchObject({ code: 'LAUNCH_SCOPE_STEP_UP', institutionId: twin.id });
    expect((await findMembership(db(), admin.user.id, twin.id))!.role).toBe('admin');
  });

  it('binds the platform subject: the same subject is the same person even with another email', async () => {
    const sub = `stable-${Date.now()}`;
    const first = await launchAs({ sub, email: `first-${sub}@school.example` });
    expect(first.response.statusCode).toBe(200);
    const again = await launchAs({ sub, email: `renamed-${sub}@school.example` });
    const profile = await post(t.app, '/api/user/refresh/profile', {}, sessionOf(again.response.body));
    expect(JSON.stringify(profile.json())).toContain(`first-${sub}@school.example`);
  });

  it('does not take over an account outside the twin by email', async () => {
    const outsider = await buildUser(db(), { twin: otherTwin });
    const { response } = await launchAs({ email: outsider.user.email });
    expect(refusal(response)).toEqual({ status: 409, code: 'ACCOUNT_EXISTS' });
    expect(await findMembership(db(), outsider.user.id, twin.id)).toBeUndefined();
    const inactive = await buildUser(db(), { twin, status: 'inactive' });
    expect(refusal((await launchAs({ email: inactive.user.email })).response)).toEqual({ status: 403, code: 'ACCOUNT_INACTIVE' });
  });

  it('answers LTI_REPLAY for a used state, and for a used nonce under a new state', async () => {
    const { auth, token, response } = await launchAs();
    expect(response.statusCode).toBe(200);
    expect(refusal(await launch(auth.state, token))).toEqual({ status: 401, code: 'LTI_REPLAY' });
    const fresh = await login();
    expect(refusal(await launch(fresh.state, token))).toEqual({ status: 401, code: 'LTI_REPLAY' });
  });

  it('refuses a wrong aud or azp, an expired token, a foreign signature, a strange state', async () => {
    expect(refusal((await launchAs({ aud: 'another-tool' })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal((await launchAs({ aud: [CLIENT_ID, 'another-tool'] })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal((await launchAs({ azp: 'another-tool' })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect((await launchAs({ aud: [CLIENT_ID, 'another-tool'], azp: CLIENT_ID })).response.statusCode).toBe(200);
    const expired = (await launchAs({}, { issuedAt: Math.floor(Date.now() / 1000) - 900, expiresIn: 300 })).response;
    expect(refusal(expired)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(expired.json().message).toContain('expired');
    expect(refusal((await launchAs({}, { key: 'stranger' })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal((await launchAs({ nonce: 'made-up' })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal((await launchAs({ iss: 'https://other-lms.example' })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal((await launchAs({ 'https://purl.imsglobal.org/spec/lti/claim/message_type': 'LtiDeepLinkingRequest' })).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal(await launch('never-issued', await lms.idToken('n')))).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal(await launch((await login()).state, 'not-a-jwt'))).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect((await t.app.inject({ method: 'POST', url: '/api/lti/launch', ...form({ state: 'x' }) })).statusCode).toBe(400);
  });

  it('refuses an unknown deployment, and a course not listed by the platform\'s twin (even if another twin lists it)', async () => {
    const claim = 'https://purl.imsglobal.org/spec/lti/claim/';
    expect(refusal((await launchAs({ [`${claim}deployment_id`]: 'dep-9' })).response)).toEqual({ status: 401, code: 'LTI_UNKNOWN_DEPLOYMENT' });
    expect(refusal((await launchAs({ [`${claim}context`]: { id: 'course-202' } })).response)).toEqual({ status: 401, code: 'LTI_UNKNOWN_CONTEXT' });
    expect(refusal((await launchAs({ [`${claim}context`]: { id: 'course-999' } })).response)).toEqual({ status: 401, code: 'LTI_UNKNOWN_CONTEXT' });
    expect(refusal((await launchAs({ [`${claim}context`]: undefined })).response)).toEqual({ status: 401, code: 'LTI_UNKNOWN_CONTEXT' });
    expect((await launchAs({ [`${claim}context`]: { id: 'course-102' } })).response.statusCode).toBe(200);
  });

  it('accepts a key rotated on the platform after fetching its keys again, at most once every 5 seconds', async () => {
    const cooldown = () => new Promise((done) => setTimeout(done, 5_100));
    await lms.rotate();
    await cooldown();
    const before = lms.keyFetches();
    const rotated = await launchAs();
    expect(rotated.response.statusCode, rotated.response.body).toBe(200);
    expect(lms.keyFetches()).toBe(before + 1);
    // Rotated again at once: the unknown key id does not make the service fetch again within 5 s.
    await lms.rotate();
    expect(refusal((await launchAs()).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(refusal((await launchAs()).response)).toEqual({ status: 401, code: 'LTI_BAD_TOKEN' });
    expect(lms.keyFetches()).toBe(before + 1);
    await cooldown();
    expect((await launchAs()).response.statusCode).toBe(200);
    expect(lms.keyFetches()).toBe(before + 2);
  }, 30_000);
});
