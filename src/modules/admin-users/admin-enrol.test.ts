// POST /api/admin/user (behaviour 2), POST /api/admin/users/bulk (behaviour 13) and the import,
// through the real routes on a real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { findMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findUserByEmail, findUserById } from '../users/users.repo.js';
import { findAnyUser } from './admin-users.repo.js';
import { parseCsv } from './csv.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
let adminA: BuiltUser;
let tokenA: string;
let tokenSuper: string;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db(), { name: 'Twin A' });
  twinB = await buildTwin(db(), { name: 'Twin B' });
  adminA = await buildUser(db(), { twin: twinA, role: 'admin', accountType: 'admin' });
  const sup = await buildUser(db(), { twin: twinB, accountType: 'super' });
  tokenA = await signIn(t.app, adminA.user.email);
  tokenSuper = await signIn(t.app, sup.user.email);
});
afterAll(() => t.close());

/** An account of twin B with names, credits, MFA and a password of its own. */
async function existingOfB(overrides: Parameters<typeof buildUser>[1] = {}) {
  const person = await buildUser(db(), { twin: twinB, fname: 'Orig', lname: 'Inal', credits: 7, mfaEnabled: true, mfaMethod: 'totp', plan: 'pro', ...overrides });
  return person;
}

describe('POST /api/admin/user', () => {
  it('creates a new account in the caller\'s twin with the role, and lists unknown fields as ignored', async () => {
    const response = await req(tokenA, 'POST', '/api/admin/user', {
      email: 'New.Person@Example.test', fname: 'New', lname: 'Person', password: 'first password', role: 'admin', credits: 50,
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ success: true, ignoredFields: ['credits'] });
    expect(response.body.data).toMatchObject({ email: 'new.person@example.test', fname: 'New', credits: 0, institution: twinA.id, accountType: 'user' });
    expect(response.body.data.memberships).toMatchObject([{ institution: twinA.id, role: 'admin' }]);
    await expect(signIn(t.app, 'new.person@example.test', 'first password')).resolves.toBeTypeOf('string');
  });

  it('adds an existing account to the twin only: names, password, credits, status, plan, current twin and MFA untouched', async () => {
    const person = await existingOfB();
    const response = await req(tokenA, 'POST', '/api/admin/user', {
      email: person.user.email, fname: 'Other', lname: 'Name', password: 'should not apply', role: 'admin', accountType: 'admin', credits: 999, status: 'inactive', plan: 'free', mfaEnabled: false,
    });
    expect(response.status).toBe(200);
    expect(response.body.ignoredFields.sort()).toEqual(['credits', 'fname', 'lname', 'mfaEnabled', 'password', 'plan', 'status']);
    const row = (await findUserById(db(), person.user.id))!;
    expect(row).toMatchObject({ fname: 'Orig', lname: 'Inal', credits: 7, status: 'active', plan: 'pro', currentTwinId: twinB.id, mfaEnabled: true, mfaMethod: 'totp', accountType: 'admin' });
    expect(row.passwordHash).toBe(person.user.passwordHash);
    expect((await findMembership(db(), person.user.id, twinA.id))?.role).toBe('admin');
  });

  it('keeps a super a super and never lowers an account type', async () => {
    const sup = await existingOfB({ accountType: 'super' });
    const first = await req(tokenA, 'POST', '/api/admin/user', { email: sup.user.email, accountType: 'user' });
    expect(first.status).toBe(200);
    expect(first.body.ignoredFields).toEqual(['accountType']);
    expect((await findUserById(db(), sup.user.id))!.accountType).toBe('super');

    const admin = await existingOfB({ accountType: 'admin' });
    await req(tokenA, 'POST', '/api/admin/user', { email: admin.user.email, accountType: 'user' });
    expect((await findUserById(db(), admin.user.id))!.accountType).toBe('admin');
  });

  it('raises to super only for a super admin', async () => {
    const person = await existingOfB();
    const refused = await req(tokenA, 'POST', '/api/admin/user', { email: person.user.email, accountType: 'super' });
    expect(refused.status).toBe(403);
    expect((await req(tokenA, 'POST', '/api/admin/user', { email: 'wannabe@example.test', accountType: 'super' })).status).toBe(403);
    expect(await findUserByEmail(db(), 'wannabe@example.test')).toBeUndefined();
    const granted = await req(tokenSuper, 'POST', '/api/admin/user', { email: person.user.email, accountType: 'super', institution: twinA.id });
    expect(granted.body.data.accountType).toBe('super');
  });

  it('raises an existing membership role, never lowers it', async () => {
    const person = await buildUser(db(), { twin: twinA, role: 'admin' });
    const response = await req(tokenA, 'POST', '/api/admin/user', { email: person.user.email, role: 'user' });
    expect(response.body.ignoredFields).toEqual(['role']);
    expect((await findMembership(db(), person.user.id, twinA.id))?.role).toBe('admin');
  });

  it('answers 404 for a twin the caller does not belong to, and 400 for an accountType outside the enum', async () => {
    expect((await req(tokenA, 'POST', '/api/admin/user', { email: 'x1@example.test', institution: twinB.id })).status).toBe(404);
    expect((await req(tokenA, 'POST', '/api/admin/user', { email: 'x2@example.test', accountType: 'owner' })).status).toBe(400);
    const member = await buildUser(db(), { twin: twinA });
    expect((await req(await signIn(t.app, member.user.email), 'POST', '/api/admin/user', { email: 'x3@example.test' })).status).toBe(403);
  });
});

describe('POST /api/admin/users/bulk', () => {
  it('acts only on rows of the admin\'s twins, reports how many changed and leaves the rest alone', async () => {
    const mine = [await buildUser(db(), { twin: twinA }), await buildUser(db(), { twin: twinA })];
    const theirs = await buildUser(db(), { twin: twinB });
    const sup = await buildUser(db(), { twin: twinA, accountType: 'super' });
    const ids = [...mine.map((p) => p.user.id), theirs.user.id, sup.user.id, adminA.user.id, 'ffffffffffffffffffffffff'];

    const deactivate = await req(tokenA, 'POST', '/api/admin/users/bulk', { action: 'deactivate', ids });
    expect(deactivate.body).toEqual({ success: true, changed: 2 });
    for (const person of mine) expect((await findUserById(db(), person.user.id))!.status).toBe('inactive');
    for (const id of [theirs.user.id, sup.user.id, adminA.user.id]) expect((await findUserById(db(), id))!.status).toBe('active');
    expect((await req(tokenA, 'POST', '/api/admin/users/bulk', { action: 'deactivate', ids })).body.changed).toBe(0);

    expect((await req(tokenA, 'POST', '/api/admin/users/bulk', { action: 'activate', ids })).body.changed).toBe(2);
    const token = await signIn(t.app, mine[0].user.email);
    expect((await req(tokenA, 'POST', '/api/admin/users/bulk', { action: 'delete', ids })).body.changed).toBe(2);
    expect((await req(token, 'POST', '/api/user/refresh/profile', {})).status).toBe(401);
    expect((await findAnyUser(db(), mine[0].user.id))!.deletedAt).not.toBeNull();
    expect(await findUserById(db(), theirs.user.id)).toBeDefined();
  });

  it('lets a super act on every twin, and refuses an unknown action', async () => {
    const theirs = await buildUser(db(), { twin: twinB });
    expect((await req(tokenSuper, 'POST', '/api/admin/users/bulk', { action: 'deactivate', ids: [theirs.user.id] })).body.changed).toBe(1);
    expect((await req(tokenSuper, 'POST', '/api/admin/users/bulk', { action: 'ban', ids: [theirs.user.id] })).status).toBe(400);
  });
});

describe('POST /api/admin/users/import', () => {
  it('imports JSON rows with behaviour 2 for existing emails and an outcome per row', async () => {
    const existing = await existingOfB();
    const sup = await existingOfB({ accountType: 'super' });
    const response = await req(tokenA, 'POST', '/api/admin/users/import', {
      role: 'user',
      users: [
        { email: 'imported.one@example.test', fname: 'Imp', lname: 'One', password: 'imported password' },
        { email: existing.user.email, fname: 'Changed', password: 'changed password', accountType: 'admin', role: 'admin' },
        { email: sup.user.email, accountType: 'user' },
        { email: 'not-an-email' },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, total: 4, created: 1, added: 2, failed: 1 });
    expect(response.body.results[1]).toMatchObject({ row: 2, outcome: 'added', userId: existing.user.id, ignoredFields: ['fname', 'password'] });
    expect(response.body.results[2]).toMatchObject({ outcome: 'added', ignoredFields: ['accountType'] });
    expect(response.body.results[3]).toMatchObject({ row: 4, outcome: 'error', email: 'not-an-email' });

    const kept = (await findUserById(db(), existing.user.id))!;
    expect(kept).toMatchObject({ fname: 'Orig', credits: 7, mfaEnabled: true, accountType: 'admin', currentTwinId: twinB.id });
    expect(kept.passwordHash).toBe(existing.user.passwordHash);
    expect((await findUserById(db(), sup.user.id))!.accountType).toBe('super');
    expect((await findMembership(db(), existing.user.id, twinA.id))?.role).toBe('admin');
    await expect(signIn(t.app, 'imported.one@example.test', 'imported password')).resolves.toBeTypeOf('string');
  });

  it('imports CSV text with a header row and quoted fields', async () => {
    const csv = 'Email,First Name,Last Name,Role\r\ncsv.one@example.test,"Doe, Jane",Smith,admin\ncsv.two@example.test,John,,\n\n';
    const response = await req(tokenA, 'POST', '/api/admin/users/import', { csv });
    expect(response.body).toMatchObject({ total: 2, created: 2, failed: 0 });
    const one = (await findUserByEmail(db(), 'csv.one@example.test'))!;
    expect(one.fname).toBe('Doe, Jane');
    expect((await findMembership(db(), one.id, twinA.id))?.role).toBe('admin');
  });

  it('leaves the planner statistics of the people up to date after a large import (the embedded database has no autovacuum)', async () => {
    const database = t.platform.database;
    const rows = Array.from({ length: 300 }, (_, i) => ({ email: `bulk-${i}@example.test` }));
    expect((await req(tokenA, 'POST', '/api/admin/users/import', { users: rows })).body).toMatchObject({ created: 300 });
    // The count the planner works from (ANALYZE sets it): the rows there are, not those of the first statistics.
    const { rows: live } = await database.executeSql(`select reltuples::int as tuples from pg_class where relname = 'users'`);
    if (database.kind === 'pglite') expect(live[0].tuples).toBeGreaterThanOrEqual(300);
  });

  it('refuses an import into another twin, and a body with neither users nor csv', async () => {
    expect((await req(tokenA, 'POST', '/api/admin/users/import', { institution: twinB.id, users: [{ email: 'z@example.test' }] })).status).toBe(404);
    expect((await req(tokenA, 'POST', '/api/admin/users/import', {})).status).toBe(400);
  });

  it('refuses an import by a member who holds users.edit but not users.create (403)', async () => {
    const member = await buildUser(db(), { twin: twinA, grants: ['users.list', 'users.edit'] });
    const token = await signIn(t.app, member.user.email);
    expect((await req(token, 'POST', '/api/admin/users/import', { users: [{ email: 'q@example.test' }] })).status).toBe(403);
  });
});

describe('parseCsv', () => {
  it('reads quotes, doubled quotes, embedded line breaks and CRLF', () => {
    expect(parseCsv('a,b\r\n"x ""y""","line\nbreak"\n')).toEqual([['a', 'b'], ['x "y"', 'line\nbreak']]);
  });
});
