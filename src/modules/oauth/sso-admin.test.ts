// Administrators' side of third-party sign-in: a twin's SSO providers (CRUD, bulk delete, secrets
// sealed and never shown) and the revoke of an institution's stored provider token, with the real
// provider's revocation succeeding or failing.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { post } from '../../../test/support/identity.js';
import { startIdentityProvider, type TestIdentityProvider } from '../../../test/support/oidc-provider.js';
import { findTwinById } from '../twins/twins.repo.js';
import { storeTwinProviderToken } from './idp-revoke.service.js';
import { ssoProviders } from './oauth.tables.js';

let idp: TestIdentityProvider;
let t: TestApp;
let admin: BuiltUser;
let adminToken: string;
let otherAdminToken: string;

beforeAll(async () => {
  idp = await startIdentityProvider([{ client_id: 'dt', client_secret: 'dt-secret', redirect_uris: ['http://127.0.0.1:4556/cb'] }]);
  const providers = [
    { id: 'school', name: 'School', issuer: idp.issuer, clientId: 'dt', clientSecret: 'dt-secret' },
    { id: 'gone', name: 'Gone', issuer: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' },
  ];
  t = await startTestApp({ env: { OIDC_PROVIDERS: JSON.stringify(providers) } });
  admin = await buildUser(t.platform.database.db, { role: 'admin' });
  adminToken = await signIn(t.app, admin.user.email);
  otherAdminToken = await signIn(t.app, (await buildUser(t.platform.database.db, { role: 'admin' })).user.email);
});
afterAll(async () => {
  await t.close();
  await idp.close();
});

const db = () => t.platform.database.db;
const call = (method: 'GET' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-access-token': token }, ...(payload ? { payload } : {}) });
const create = (token: string, body: object = {}) =>
  post(t.app, '/api/admin/sso-provider', { name: 'Campus', issuer: 'https://login.campus.example', clientId: 'campus', clientSecret: 'top-secret', ...body }, token);

describe('SSO providers of a twin', () => {
  it('creates one with its secret sealed and never shown', async () => {
    const response = await create(adminToken);
    expect(response.statusCode).toBe(201);
    const { data } = response.json();
    expect(data).toMatchObject({ name: 'Campus', issuer: 'https://login.campus.example', clientId: 'campus', hasClientSecret: true, institution: admin.twin!.id });
    expect(response.body).not.toContain('top-secret');
    const [row] = await db().select().from(ssoProviders).where(eq(ssoProviders.id, data._id));
    expect(row.clientSecretSealed).toBeTruthy();
    expect(row.clientSecretSealed).not.toContain('top-secret');
    const list = await call('GET', '/api/admin/sso-providers', adminToken);
    expect(list.json().data.map((p: { _id: string }) => p._id)).toContain(data._id);
    expect(list.body).not.toContain('top-secret');
  });

  it('refuses a plain-http issuer off loopback', async () => {
    const response = await create(adminToken, { issuer: 'http://login.campus.example' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.field).toBe('body.issuer');
  });

  it('keeps the secret when an edit leaves it empty', async () => {
    const { data } = (await create(adminToken)).json();
    const edited = await call('PUT', `/api/admin/sso-provider/${data._id}`, adminToken, { name: 'Campus 2', clientSecret: '' });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data).toMatchObject({ name: 'Campus 2', hasClientSecret: true });
    const [before] = await db().select().from(ssoProviders).where(eq(ssoProviders.id, data._id));
    expect(before.clientSecretSealed).toBeTruthy();
  });

  it("answers 404 for another twin's provider and 403 without sso.edit", async () => {
    const { data } = (await create(adminToken)).json();
    expect((await call('GET', `/api/admin/sso-provider/${data._id}`, otherAdminToken)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/admin/sso-provider/${data._id}`, otherAdminToken)).statusCode).toBe(404);
    const member = await buildUser(db(), { twin: admin.twin });
    expect((await call('GET', '/api/admin/sso-providers', await signIn(t.app, member.user.email))).statusCode).toBe(403);
    expect((await call('GET', `/api/admin/sso-provider/${data._id}`, adminToken)).statusCode).toBe(200);
  });

  it('bulk-deletes only the twin\'s own and counts them', async () => {
    const mine = [(await create(adminToken)).json().data._id, (await create(adminToken)).json().data._id];
    const theirs = (await create(otherAdminToken)).json().data._id;
    const response = await post(t.app, '/api/admin/sso-providers/bulk-delete', { ids: [...mine, theirs] }, adminToken);
    expect(response.json()).toEqual({ success: true, changed: 2 });
    expect((await call('GET', `/api/admin/sso-provider/${theirs}`, otherAdminToken)).statusCode).toBe(200);
    expect((await call('GET', `/api/admin/sso-provider/${mine[0]}`, adminToken)).statusCode).toBe(404);
  });
});

describe('DELETE /api/auth/idp/institution/{institutionId}/revoke', () => {
  const revoke = (twinId: string, token: string, bearer = false) =>
    t.app.inject({
      method: 'DELETE',
      url: `/api/auth/idp/institution/${twinId}/revoke`,
      headers: bearer ? { authorization: `Bearer ${token}` } : { 'x-access-token': token },
    });

  it('removes the stored token and revokes it at the provider', async () => {
    const accessToken = await idp.clientToken('dt', 'dt-secret');
    expect(await idp.introspect(accessToken, 'dt', 'dt-secret')).toBe(true);
    await storeTwinProviderToken(db(), t.platform.secrets, admin.twin!.id, { providerId: 'school', accessToken });
    const stored = (await findTwinById(db(), admin.twin!.id))!.cloudServices.idp;
    expect(stored.sealed).not.toContain(accessToken);
    const response = await revoke(admin.twin!.id, adminToken, true);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, message: 'Institution access revoked' });
    expect((await findTwinById(db(), admin.twin!.id))!.cloudServices).not.toHaveProperty('idp');
    expect(await idp.introspect(accessToken, 'dt', 'dt-secret')).toBe(false);
  });

  it("succeeds locally while the provider's revoke fails", async () => {
    await storeTwinProviderToken(db(), t.platform.secrets, admin.twin!.id, { providerId: 'gone', accessToken: 'at-123' });
    await storeTwinProviderToken(db(), t.platform.secrets, admin.twin!.id, { providerId: 'x', accessToken: 'keep' }, 'other');
    const response = await revoke(admin.twin!.id, adminToken);
    expect(response.statusCode).toBe(200);
    expect(response.json().success).toBe(true);
    const services = (await findTwinById(db(), admin.twin!.id))!.cloudServices;
    expect(services).not.toHaveProperty('idp');
    expect(services).toHaveProperty('other');
  });

  it('answers Not authorized without institutions.edit, and not found elsewhere', async () => {
    await storeTwinProviderToken(db(), t.platform.secrets, admin.twin!.id, { providerId: 'gone', accessToken: 'at-456' });
    const member = await buildUser(db(), { twin: admin.twin });
    const refused = await revoke(admin.twin!.id, await signIn(t.app, member.user.email));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ success: false, message: 'Not authorized' });
    const foreign = await revoke(admin.twin!.id, otherAdminToken);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('Institution not found');
    expect((await revoke('aaaaaaaaaaaaaaaaaaaaaaaa', adminToken)).json()).toMatchObject({ success: false, message: 'Institution not found' });
    expect((await findTwinById(db(), admin.twin!.id))!.cloudServices).toHaveProperty('idp');
  });
});
