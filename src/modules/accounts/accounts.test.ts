// Accounts through the real routes: super admins only; a twin joins an account (an unknown one 404),
// the account lists its twins, its entitlement applies to them, and deleting it detaches them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findTwinById } from '../twins/twins.repo.js';
import { grantsOf } from '../entitlements/entitlements.service.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
const token = {} as Record<'super' | 'adminA' | 'plain', string>;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db(), { name: 'Alpha college' });
  twinB = await buildTwin(db(), { name: 'Beta school' });
  token.super = await signIn(t.app, (await buildUser(db(), { twin: twinB, accountType: 'super' })).user.email);
  token.adminA = await signIn(t.app, (await buildUser(db(), { twin: twinA, role: 'admin' })).user.email);
  token.plain = await signIn(t.app, (await buildUser(db(), { twin: twinA })).user.email);
});
afterAll(() => t.close());

const create = (who: string, body: Record<string, unknown>) => req(who, 'POST', '/api/admin/account', body);

describe('accounts admin family', () => {
  it('lets a super admin create, read, edit, list and delete an account', async () => {
    const created = await create(token.super, { name: 'Northwind group', contactEmail: 'ops@northwind.test' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Northwind group', contactEmail: 'ops@northwind.test', institutions: [] });
    const id = created.body.data._id;
    expect((await req(token.super, 'GET', `/api/admin/account/${id}`)).body.data.name).toBe('Northwind group');
    const edited = await req(token.super, 'PUT', `/api/admin/account/${id}`, { name: 'Northwind', unknown: 'dropped' });
    expect(edited.body.data).toMatchObject({ name: 'Northwind', contactEmail: 'ops@northwind.test' });
    const listed = await req(token.super, 'GET', '/api/admin/accounts?search=northw');
    expect(listed.body).toMatchObject({ success: true, total: 1, page: 1, data: [{ _id: id, name: 'Northwind' }] });
    expect((await req(token.super, 'DELETE', `/api/admin/account/${id}`)).body).toEqual({ success: true, message: 'Account deleted' });
    expect((await req(token.super, 'GET', `/api/admin/account/${id}`)).body).toMatchObject({ success: false, code: 'ACCOUNT_NOT_FOUND' });
    expect((await req(token.super, 'DELETE', `/api/admin/account/${id}`)).status).toBe(404);
  });

  it('refuses twin admins and plain users on every route (403 SUPER_ONLY)', async () => {
    const id = (await create(token.super, { name: 'Hidden' })).body.data._id;
    for (const who of [token.adminA, token.plain]) {
      const answers = [
        await req(who, 'GET', '/api/admin/accounts'),
        await req(who, 'GET', `/api/admin/account/${id}`),
        await create(who, { name: 'Mine' }),
        await req(who, 'PUT', `/api/admin/account/${id}`, { name: 'Taken' }),
        await req(who, 'DELETE', `/api/admin/account/${id}`),
        await req(who, 'POST', '/api/admin/accounts/bulk-delete', { ids: [id] }),
      ];
      for (const answer of answers) expect(answer).toMatchObject({ status: 403, body: { success: false, code: 'SUPER_ONLY' } });
    }
    expect((await req(token.super, 'GET', `/api/admin/account/${id}`)).body.data.name).toBe('Hidden');
  });

  it('groups twins: a twin joins with PUT institution {accountId}, an unknown account is 404, and a twin admin cannot move theirs', async () => {
    const account = (await create(token.super, { name: 'Group' })).body.data._id;
    expect((await req(token.super, 'PUT', `/api/admin/institution/${twinA.id}`, { accountId: 'ffffffffffffffffffffffff' })).body).toMatchObject({
      success: false,
      code: 'ACCOUNT_NOT_FOUND',
    });
    expect((await req(token.super, 'PUT', `/api/admin/institution/${twinA.id}`, { accountId: account })).body.data.accountId).toBe(account);
    expect((await req(token.super, 'PUT', `/api/admin/institution/${twinB.id}`, { accountId: account })).status).toBe(200);
    const read = await req(token.super, 'GET', `/api/admin/account/${account}`);
    expect(read.body.data.institutions).toEqual([
      { _id: twinA.id, name: 'Alpha college' },
      { _id: twinB.id, name: 'Beta school' },
    ]);
    const moved = await req(token.adminA, 'PUT', `/api/admin/institution/${twinA.id}`, { accountId: null });
    expect(moved.body).toMatchObject({ ignoredFields: ['accountId'], data: { accountId: account } });

    // An account-wide entitlement reaches its twins; deleting the account detaches them and removes it.
    expect((await req(token.super, 'POST', '/api/admin/entitlement', { name: 'Group plan', accountId: account, models: ['m-group'] })).status).toBe(201);
    expect((await grantsOf(db(), twinA.id)).models).toEqual(['m-group']);
    expect((await req(token.super, 'DELETE', `/api/admin/account/${account}`)).status).toBe(200);
    expect((await findTwinById(db(), twinA.id))?.accountId).toBeNull();
    expect((await findTwinById(db(), twinB.id))?.accountId).toBeNull();
    expect((await grantsOf(db(), twinA.id)).entitled).toBe(false);
  });

  it('answers bad input with a clear 400 in the failure shape', async () => {
    const empty = await create(token.super, { name: '   ' });
    expect(empty).toMatchObject({ status: 400, body: { success: false, code: 'VALIDATION_FAILED', error: { field: 'body.name' } } });
    expect((await create(token.super, { name: 'X', contactEmail: 'not-an-email' })).body.error.field).toBe('body.contactEmail');
    expect((await req(token.super, 'GET', '/api/admin/account/not-an-id')).status).toBe(400);
    expect((await req(token.super, 'POST', '/api/admin/accounts/bulk-delete', { ids: [] })).status).toBe(400);
  });

  it('bulk delete reports how many changed, unknown ids skipped', async () => {
    const one = (await create(token.super, { name: 'one' })).body.data._id;
    const two = (await create(token.super, { name: 'two' })).body.data._id;
    const answer = await req(token.super, 'POST', '/api/admin/accounts/bulk-delete', { ids: [one, two, 'ffffffffffffffffffffffff'] });
    expect(answer.body).toEqual({ success: true, changed: 2 });
  });
});
