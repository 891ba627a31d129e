// Entitlements through the real routes: super admins write, twin admins read their own, other twins
// answer 404, bulk delete reports how many changed; and the merged grant later features read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { grantsOf } from './entitlements.service.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
let tokenA: string;
let tokenSuper: string;
const db = () => t.platform.database.db;
const ACCOUNT = 'acacacacacacacacacacacac';

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db(), { accountId: ACCOUNT });
  twinB = await buildTwin(db());
  tokenA = await signIn(t.app, (await buildUser(db(), { twin: twinA, role: 'admin' })).user.email);
  tokenSuper = await signIn(t.app, (await buildUser(db(), { twin: twinB, accountType: 'super' })).user.email);
});
afterAll(() => t.close());

const create = (token: string, body: Record<string, unknown>) => req(token, 'POST', '/api/admin/entitlement', body);

describe('entitlements admin family', () => {
  it('lets a super admin create, read, edit and delete; twin admins may only read their own', async () => {
    const created = await create(tokenSuper, { name: 'Pro plan', institution: twinA.id, models: ['gpt-x'], tools: ['web'], features: ['voice'], caps: { dailyTurns: 500 } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Pro plan', institution: twinA.id, models: ['gpt-x'], caps: { dailyTurns: 500 }, status: 'active' });
    const id = created.body.data._id;

    expect((await req(tokenA, 'GET', `/api/admin/entitlement/${id}`)).body.data.name).toBe('Pro plan');
    expect((await req(tokenA, 'PUT', `/api/admin/entitlement/${id}`, { caps: { dailyTurns: 1e6 } })).status).toBe(403);
    expect((await create(tokenA, { name: 'Self-granted', institution: twinA.id })).status).toBe(403);

    const edited = await req(tokenSuper, 'PUT', `/api/admin/entitlement/${id}`, { tools: ['web', 'code'], status: 'inactive' });
    expect(edited.body.data).toMatchObject({ tools: ['web', 'code'], status: 'inactive', models: ['gpt-x'] });
    expect((await req(tokenA, 'DELETE', `/api/admin/entitlement/${id}`)).status).toBe(403);
    expect((await req(tokenSuper, 'DELETE', `/api/admin/entitlement/${id}`)).body).toEqual({ success: true, message: 'Entitlement deleted' });
    expect((await req(tokenSuper, 'GET', `/api/admin/entitlement/${id}`)).status).toBe(404);
  });

  it("hides another twin's entitlements (404) and lists only those of the admin's twins, account-wide ones included", async () => {
    const theirs = await create(tokenSuper, { name: 'B only', institution: twinB.id });
    await create(tokenSuper, { name: 'Account wide', accountId: ACCOUNT });
    expect((await req(tokenA, 'GET', `/api/admin/entitlement/${theirs.body.data._id}`)).status).toBe(404);
    const listed = await req(tokenA, 'GET', '/api/admin/entitlements');
    expect(listed.body.data.map((e: { name: string }) => e.name)).toEqual(['Account wide']);
    expect((await req(tokenSuper, 'GET', '/api/admin/entitlements?search=only')).body.total).toBe(1);
  });

  it('needs exactly one target, and refuses values outside the schema', async () => {
    expect((await create(tokenSuper, { name: 'Nowhere' })).body.code).toBe('TARGET_REQUIRED');
    expect((await create(tokenSuper, { name: 'Both', institution: twinA.id, accountId: ACCOUNT })).status).toBe(400);
    expect((await create(tokenSuper, { name: 'Bad cap', institution: twinA.id, caps: { dailyTurns: -3 } })).status).toBe(400);
  });

  it('bulk delete reports how many changed and does nothing for a twin admin', async () => {
    const one = (await create(tokenSuper, { name: 'one', institution: twinA.id })).body.data._id;
    const two = (await create(tokenSuper, { name: 'two', institution: twinB.id })).body.data._id;
    expect((await req(tokenA, 'POST', '/api/admin/entitlements/bulk-delete', { ids: [one, two] })).body).toEqual({ success: true, changed: 0 });
    expect((await req(tokenSuper, 'POST', '/api/admin/entitlements/bulk-delete', { ids: [one, two, 'ffffffffffffffffffffffff'] })).body).toEqual({ success: true, changed: 2 });
  });

  it('merges the active grants of a twin for later features', async () => {
    const twin = await buildTwin(db());
    await create(tokenSuper, { name: 'g1', institution: twin.id, models: ['m1'], caps: { dailyTurns: 10 } });
    await create(tokenSuper, { name: 'g2', institution: twin.id, models: ['m2', 'm1'], caps: { dailyTurns: 30, maxFiles: 5 } });
    await create(tokenSuper, { name: 'off', institution: twin.id, models: ['m3'], status: 'inactive' });
    await create(tokenSuper, { name: 'expired', institution: twin.id, models: ['m4'], expiresAt: '2000-01-01T00:00:00Z' });
    const grants = await grantsOf(db(), twin.id);
    expect(grants).toMatchObject({ entitled: true, caps: { dailyTurns: 30, maxFiles: 5 } });
    expect(grants.models.sort()).toEqual(['m1', 'm2']);
  });
});
