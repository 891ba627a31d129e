// A twin's LTI platforms through the real routes: twin admins (sso.edit) manage their twin's, another
// twin's answer 404, a member without sso.edit is refused, bad input answers 400 at the field, and the
// platform's URLs pass the outbound guard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import type { TwinRow } from '../twins/twins.tables.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
const token = {} as Record<'super' | 'adminA' | 'adminB' | 'plain' | 'ssoEditor', string>;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_URL: 'https://twins.example' } });
  req = requester(t.app);
  twinA = await buildTwin(db());
  twinB = await buildTwin(db());
  token.super = await signIn(t.app, (await buildUser(db(), { twin: null, accountType: 'super' })).user.email);
  token.adminA = await signIn(t.app, (await buildUser(db(), { twin: twinA, role: 'admin' })).user.email);
  token.adminB = await signIn(t.app, (await buildUser(db(), { twin: twinB, role: 'admin' })).user.email);
  token.plain = await signIn(t.app, (await buildUser(db(), { twin: twinA })).user.email);
  token.ssoEditor = await signIn(t.app, (await buildUser(db(), { twin: twinA, grants: ['sso.edit'] })).user.email);
});
afterAll(() => t.close());

let counter = 0;
const platform = (overrides: Record<string, unknown> = {}) => ({
  issuer: `https://lms${++counter}.school.example`,
  clientId: `tool-${counter}`,
  authLoginUrl: `https://lms${counter}.school.example/mod/lti/auth.php`,
  jwksUrl: `https://lms${counter}.school.example/mod/lti/certs.php`,
  deploymentIds: ['1'],
  ...overrides,
});
const add = (who: string, body: Record<string, unknown>) => req(who, 'POST', '/api/admin/lti-platform', body);

describe('LTI platforms', () => {
  it('a twin admin registers, reads, lists, edits and removes one; the answer names the tool URLs to give the platform', async () => {
    const body = platform({ deploymentIds: ['1', '1', 'b-2'] });
    const created = await add(token.adminA, body);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      institution: twinA.id,
      issuer: body.issuer,
      clientId: body.clientId,
      authLoginUrl: body.authLoginUrl,
      jwksUrl: body.jwksUrl,
      deploymentIds: ['1', 'b-2'],
      toolLoginUrl: 'https://twins.example/api/lti/login',
      toolLaunchUrl: 'https://twins.example/api/lti/launch',
    });
    const id = created.body.data._id;
    expect((await req(token.adminA, 'GET', `/api/admin/lti-platform/${id}`)).body.data).toEqual(created.body.data);
    const listed = await req(token.adminA, 'GET', '/api/admin/lti-platforms');
    expect(listed.body).toMatchObject({ success: true, page: 1, limit: 20 });
    expect(listed.body.data.map((p: { _id: string }) => p._id)).toContain(id);

    const edited = await req(token.adminA, 'PUT', `/api/admin/lti-platform/${id}`, { deploymentIds: ['3'], clientId: 'renamed' });
    expect(edited.body.data).toMatchObject({ deploymentIds: ['3'], clientId: 'renamed', issuer: body.issuer });
    expect((await req(token.ssoEditor, 'GET', `/api/admin/lti-platform/${id}`)).status).toBe(200);

    expect((await req(token.adminA, 'DELETE', `/api/admin/lti-platform/${id}`)).body).toEqual({ success: true, message: 'LTI platform deleted' });
    expect((await req(token.adminA, 'GET', `/api/admin/lti-platform/${id}`)).body).toMatchObject({ success: false, code: 'LTI_PLATFORM_NOT_FOUND' });
  });

  it("answers another twin's platform as not found, and lists only the caller's twins", async () => {
    const theirs = (await add(token.adminB, platform())).body.data._id;
    for (const [method, body] of [['GET'], ['PUT', { clientId: 'mine now' }], ['DELETE']] as const) {
      const answer = await req(token.adminA, method, `/api/admin/lti-platform/${theirs}`, body);
      expect(answer).toMatchObject({ status: 404, body: { success: false, code: 'LTI_PLATFORM_NOT_FOUND' } });
    }
    expect((await req(token.adminB, 'GET', `/api/admin/lti-platform/${theirs}`)).body.data.clientId).not.toBe('mine now');
    expect((await add(token.adminA, platform({ institution: twinB.id }))).status).toBe(404);
    const listed = await req(token.adminA, 'GET', '/api/admin/lti-platforms?limit=100');
    expect(listed.body.data.every((p: { institution: string }) => p.institution === twinA.id)).toBe(true);
    expect((await req(token.adminA, 'GET', `/api/admin/lti-platforms?institutionId=${twinB.id}`)).body).toMatchObject({ data: [], total: 0 });
    expect((await req(token.super, 'GET', `/api/admin/lti-platforms?institutionId=${twinB.id}`)).body.data.map((p: { _id: string }) => p._id)).toContain(theirs);
    expect((await req(token.super, 'GET', `/api/admin/lti-platform/${theirs}`)).status).toBe(200);
    // A super admin registers for a named twin.
    expect((await add(token.super, platform({ institution: twinB.id }))).body.data.institution).toBe(twinB.id);
  });

  it('a member without sso.edit may not administer; a grant of sso.edit may', async () => {
    const id = (await add(token.adminA, platform())).body.data._id;
    expect((await req(token.plain, 'GET', '/api/admin/lti-platforms')).status).toBe(403);
    expect((await req(token.plain, 'GET', `/api/admin/lti-platform/${id}`)).status).toBe(404);
    expect((await add(token.plain, platform())).body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect((await req(token.plain, 'DELETE', `/api/admin/lti-platform/${id}`)).status).toBe(404);
    expect((await add(token.ssoEditor, platform())).status).toBe(201);
    expect((await req(null, 'GET', '/api/admin/lti-platforms')).status).toBe(401);
  });

  it('refuses bad input at the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [platform({ issuer: 'not a url' }), 'body.issuer'],
      [platform({ issuer: 'http://lms.school.example' }), 'body.issuer'],
      [platform({ authLoginUrl: 'ftp://lms.school.example/auth' }), 'body.authLoginUrl'],
      [platform({ jwksUrl: '' }), 'body.jwksUrl'],
      [platform({ clientId: '  ' }), 'body.clientId'],
      [platform({ deploymentIds: 'one' }), 'body.deploymentIds'],
      [platform({ deploymentIds: [''] }), 'body.deploymentIds.0'],
      [{ ...platform(), jwksUrl: undefined }, 'body.jwksUrl'],
    ];
    for (const [body, field] of cases) {
      const answer = await add(token.adminA, body);
      expect({ field, answer }).toMatchObject({ field, answer: { status: 400, body: { success: false, code: 'VALIDATION_FAILED', error: { field } } } });
    }
    expect((await req(token.adminA, 'PUT', '/api/admin/lti-platform/nope', { clientId: 'x' })).status).toBe(400);
    const noTwin = await signIn(t.app, (await buildUser(db(), { twin: null, accountType: 'super' })).user.email);
    expect((await add(noTwin, platform())).body).toMatchObject({ code: 'INSTITUTION_REQUIRED', error: { field: 'body.institution' } });
    const once = platform();
    expect((await add(token.adminA, once)).status).toBe(201);
    expect((await add(token.adminA, once)).body).toMatchObject({ success: false, code: 'LTI_PLATFORM_EXISTS' });
    // Another twin may register the same platform (its own courses).
    expect((await add(token.adminB, once)).status).toBe(201);
  });

  it('refuses platform URLs at internal addresses (the outbound guard), on create and edit', async () => {
    for (const field of ['issuer', 'authLoginUrl', 'jwksUrl']) {
      for (const hostile of ['http://127.0.0.1:9/x', 'https://169.254.169.254/latest', 'https://10.0.0.8/keys', 'http://localhost:8080/']) {
        const answer = await add(token.adminA, platform({ [field]: hostile }));
        expect({ field, hostile, answer }).toMatchObject({ answer: { status: 400, body: { success: false, code: expect.stringMatching(/URL_NOT_ALLOWED|VALIDATION_FAILED/) } } });
      }
    }
    const id = (await add(token.adminA, platform())).body.data._id;
    const moved = await req(token.adminA, 'PUT', `/api/admin/lti-platform/${id}`, { jwksUrl: 'http://127.0.0.1:9/certs' });
    expect(moved).toMatchObject({ status: 400, body: { code: 'URL_NOT_ALLOWED' } });
  });
});
