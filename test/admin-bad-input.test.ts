// Admin routes given odd but well-formed input, as a client sees them: a PUT naming no known field is a
// 200 that changes nothing (as the user and twin routes already answer), and a bulk route called by
// someone who holds its permission in no twin is a 403, like the lists and single-item routes; a twin
// admin still gets changed: 0 for ids outside their twins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TwinRow } from '../src/modules/twins/twins.tables.js';
import { startTestApp, type TestApp } from './support/app.js';
import { buildTwin, buildUser, signIn } from './support/factories.js';
import { requester } from './support/http.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
const token = {} as Record<'super' | 'adminA' | 'plain', string>;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  const db = t.platform.database.db;
  twinA = await buildTwin(db);
  twinB = await buildTwin(db);
  token.super = await signIn(t.app, (await buildUser(db, { twin: twinA, accountType: 'super' })).user.email);
  token.adminA = await signIn(t.app, (await buildUser(db, { twin: twinA, role: 'admin' })).user.email);
  token.plain = await signIn(t.app, (await buildUser(db, { twin: twinA })).user.email);
});
afterAll(() => t.close());

describe('a PUT with no known field', () => {
  it('leaves an AI model, an entitlement and an SSO provider as they were, with a 200', async () => {
    const model = await req(token.super, 'POST', '/api/admin/ai-model', { name: 'Fast', model: 'gpt-4o-mini', institution: twinA.id });
    const entitlement = await req(token.super, 'POST', '/api/admin/entitlement', { name: 'Basic', institution: twinA.id });
    const provider = await req(token.adminA, 'POST', '/api/admin/sso-provider', { name: 'Campus', issuer: 'https://idp.example.test', clientId: 'dt' });
    const routes = [
      [token.super, `/api/admin/ai-model/${model.body.data._id}`, model.body.data],
      [token.super, `/api/admin/entitlement/${entitlement.body.data._id}`, entitlement.body.data],
      [token.adminA, `/api/admin/sso-provider/${provider.body.data._id}`, provider.body.data],
    ] as const;
    for (const [who, url, created] of routes) {
      for (const body of [{}, { unknownField: 'x' }]) {
        const response = await req(who, 'PUT', url, body);
        expect(response.status, url).toBe(200);
        expect(response.body).toEqual({ success: true, data: created });
      }
      expect((await req(who, 'GET', url)).body.data).toEqual(created);
    }
  });
});

describe('bulk routes for someone without the permission in any twin', () => {
  const ids = ['aaaaaaaaaaaaaaaaaaaaaaaa'];
  const bulkRoutes: Array<[string, Record<string, unknown>]> = [
    ['/api/admin/uploads/bulk-delete', { ids }],
    ['/api/admin/users/bulk', { action: 'deactivate', ids }],
    ['/api/admin/users/bulk', { action: 'delete', ids }],
    ['/api/admin/institutions/bulk', { action: 'activate', ids }],
    ['/api/admin/institutions/bulk', { action: 'delete', ids }],
    ['/api/admin/entitlements/bulk-delete', { ids }],
    ['/api/admin/ai-models/bulk-delete', { ids }],
    ['/api/admin/assistants/bulk-delete', { ids }],
    ['/api/admin/histories/bulk-delete', { ids }],
    ['/api/admin/feedback/bulk-delete', { ids }],
    ['/api/admin/sessions/bulk-delete', { ids }],
    ['/api/admin/sso-providers/bulk-delete', { ids }],
    ['/api/admin/questions/bulk-delete', { ids }],
  ];

  it('answers 403 to a plain user on every bulk route', async () => {
    for (const [url, body] of bulkRoutes) {
      const response = await req(token.plain, 'POST', url, body);
      expect(response.status, url).toBe(403);
      expect(response.body, url).toMatchObject({ success: false, message: 'Not authorized' });
    }
  });

  it('still answers a twin admin with changed: 0 for ids of twins they do not manage', async () => {
    const other = await req(token.super, 'POST', '/api/admin/ai-model', { name: 'Other', model: 'gpt-4o-mini', institution: twinB.id });
    const refused = await req(token.adminA, 'POST', '/api/admin/ai-models/bulk-delete', { ids: [other.body.data._id] });
    expect(refused.body).toEqual({ success: true, changed: 0 });
    expect((await req(token.adminA, 'POST', '/api/admin/institutions/bulk', { action: 'deactivate', ids: [twinB.id] })).body).toEqual({ success: true, changed: 0 });
    expect((await req(token.super, 'GET', `/api/admin/ai-model/${other.body.data._id}`)).status).toBe(200);
  });
});
