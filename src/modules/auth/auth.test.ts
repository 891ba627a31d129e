// Sign-in, the auth guard and sign-out, through the real routes on a real database.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { sessions } from './sessions.tables.js';

let t: TestApp;
let person: BuiltUser;

beforeAll(async () => {
  t = await startTestApp();
  person = await buildUser(t.platform.database.db, { fname: 'Ada', lname: 'Lovelace' });
});
afterAll(() => t.close());

const refresh = (headers: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers, payload: {} });

describe('POST /api/auth/signin', () => {
  it('returns a token and the profile', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/auth/signin',
      payload: { email: person.user.email.toUpperCase(), password: person.password },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(typeof body.token).toBe('string');
    expect(body.profile).toMatchObject({ _id: person.user.id, email: person.user.email, fname: 'Ada', lname: 'Lovelace' });
    expect(body.profile.institution._id).toBe(person.twin!.id);
    expect(body.profile).not.toHaveProperty('passwordHash');
  });

  it('gives the same 401 for a wrong password and an unknown email', async () => {
    const wrong = await t.app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email: person.user.email, password: 'nope-nope' } });
    const unknown = await t.app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email: 'ghost@example.test', password: 'nope-nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
    expect(wrong.json().message).toBe('Invalid email or password');
  });

  it('refuses a malformed email with 400 naming the field', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email: 'not-an-email', password: 'x' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.field).toBe('body.email');
  });

  it('refuses an inactive account with 403 once the password is right', async () => {
    const inactive = await buildUser(t.platform.database.db, { status: 'inactive' });
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email: inactive.user.email, password: inactive.password } });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('ACCOUNT_INACTIVE');
  });
});

describe('the auth guard', () => {
  it('accepts the token in x-access-token and as Bearer', async () => {
    const token = await signIn(t.app, person.user.email);
    expect((await refresh({ 'x-access-token': token })).statusCode).toBe(200);
    expect((await refresh({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });

  it('answers 401 without a token, with a forged one and with an expired session', async () => {
    expect((await refresh({})).statusCode).toBe(401);
    expect((await refresh({})).json()).toMatchObject({ success: false, message: 'Authentication Required' });
    expect((await refresh({ 'x-access-token': 'abc.def.ghi' })).statusCode).toBe(401);

    const token = await signIn(t.app, person.user.email);
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    await t.platform.database.db.update(sessions).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(sessions.id, claims.sid));
    // A fresh token for an expired session: not in the cache, so the database decides.
    const other = await signIn(t.app, person.user.email);
    expect((await refresh({ 'x-access-token': other })).statusCode).toBe(200);
    const forgedOnExpired = await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': token }, payload: {} });
    expect(forgedOnExpired.statusCode).toBe(401);
  });

  it('issues a token valid for 24 hours', async () => {
    const token = await signIn(t.app, person.user.email);
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(24 * 60 * 60);
  });
});

describe('POST /api/auth/signout', () => {
  it('revokes the session at once, and only that session', async () => {
    const first = await signIn(t.app, person.user.email);
    const second = await signIn(t.app, person.user.email);
    expect((await refresh({ 'x-access-token': first })).statusCode).toBe(200);
    const out = await t.app.inject({ method: 'POST', url: '/api/auth/signout', headers: { 'x-access-token': first } });
    expect(out.statusCode).toBe(200);
    expect((await refresh({ 'x-access-token': first })).statusCode).toBe(401);
    expect((await refresh({ 'x-access-token': second })).statusCode).toBe(200);
  });
});
