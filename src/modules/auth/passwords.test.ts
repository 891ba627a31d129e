// Passwords and the security effects: change, forgot/reset by mailed link, mustChangePassword
// limiting a session, and revocation of other sessions, all through the real routes.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { post, profileStatus, signInRaw } from '../../../test/support/identity.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';
import { users } from '../users/users.tables.js';
import { passwordResets } from './identity.tables.js';
import { applySecurityChange } from './security-effects.js';
import { createSessionCache } from './session-cache.js';

let t: TestApp;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://twins.example.test' } });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const db = () => t.platform.database.db;
const NEW_PASSWORD = 'a brand new passphrase';

async function resetLink(email: string): Promise<string> {
  const mail = await smtp.next((m) => m.to.includes(email) && /reset/i.test(m.subject));
  const match = /https:\/\/twins\.example\.test\/reset-password\?token=(\S+)/.exec(mail.text);
  if (!match) throw new Error(`no link in: ${mail.text}`);
  return decodeURIComponent(match[1]);
}

describe('POST /api/user/me/password', () => {
  it('changes the password, keeps this session and revokes the others', async () => {
    const person = await buildUser(db());
    const other = await signIn(t.app, person.user.email);
    const token = await signIn(t.app, person.user.email);
    const response = await post(t.app, '/api/user/me/password', { currentPassword: person.password, newPassword: NEW_PASSWORD }, token);
    expect(response.statusCode).toBe(200);
    expect(await profileStatus(t.app, token)).toBe(200);
    expect(await profileStatus(t.app, other)).toBe(401);
    expect((await signInRaw(t.app, person.user.email, person.password)).statusCode).toBe(401);
    expect((await signInRaw(t.app, person.user.email, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('refuses a wrong current password and a short new one', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    const wrong = await post(t.app, '/api/user/me/password', { currentPassword: 'not the password', newPassword: NEW_PASSWORD }, token);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('INVALID_PASSWORD');
    const short = await post(t.app, '/api/user/me/password', { currentPassword: person.password, newPassword: 'short' }, token);
    expect(short.statusCode).toBe(400);
    expect(short.json().error.field).toBe('body.newPassword');
  });
});

describe('mustChangePassword', () => {
  it('limits the session to changing the password until it is changed', async () => {
    const person = await buildUser(db(), { mustChangePassword: true });
    const token = await signIn(t.app, person.user.email);
    const profile = await post(t.app, '/api/user/refresh/profile', {}, token);
    expect(profile.statusCode).toBe(200);
    expect(profile.json().profile.mustChangePassword).toBe(true);
    const blocked = await post(t.app, '/api/user/me/totp/setup', {}, token);
    expect(blocked.statusCode).toBe(403);
    expect(blocked.json()).toMatchObject({ success: false, code: 'PASSWORD_CHANGE_REQUIRED' });
    expect((await post(t.app, '/api/user/me/password', { currentPassword: person.password, newPassword: NEW_PASSWORD }, token)).statusCode).toBe(200);
    expect((await post(t.app, '/api/user/me/totp/setup', {}, token)).statusCode).toBe(200);
    const row = (await db().select().from(users).where(eq(users.id, person.user.id)))[0];
    expect(row.mustChangePassword).toBe(false);
  });
});

describe('applySecurityChange (the effects of PUT /api/admin/user/{userId})', () => {
  it('limits live sessions at once when mustChangePassword is set', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    expect((await post(t.app, '/api/user/me/totp/setup', {}, token)).statusCode).toBe(200); // now cached
    // A cache of another process: the invalidation reaches the app's cache over the bus.
    const otherProcess = await createSessionCache(t.platform.bus);
    await applySecurityChange(db(), otherProcess, person.user.id, { mustChangePassword: true });
    await otherProcess.close();
    await expect.poll(async () => (await post(t.app, '/api/user/me/totp/setup', {}, token)).statusCode).toBe(403);
  });

  it('a new password revokes every session; mfaEnabled asks for emailed codes and revokes too', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    const cache = await createSessionCache(t.platform.bus);
    const revoked = await applySecurityChange(db(), cache, person.user.id, { password: NEW_PASSWORD });
    expect(revoked).toHaveLength(1);
    await expect.poll(() => profileStatus(t.app, token)).toBe(401);
    const second = await signIn(t.app, person.user.email, NEW_PASSWORD);
    await applySecurityChange(db(), cache, person.user.id, { mfaEnabled: true });
    await cache.close();
    await expect.poll(() => profileStatus(t.app, second)).toBe(401);
    const started = (await signInRaw(t.app, person.user.email, NEW_PASSWORD)).json();
    expect(started).toMatchObject({ mfaRequired: true, mfaMethod: 'email' });
    await smtp.next((m) => m.to.includes(person.user.email));
  });
});

describe('forgot and reset', () => {
  it('answers the same whether or not the email exists, and mails only real accounts', async () => {
    const person = await buildUser(db());
    const known = await post(t.app, '/api/auth/forgot-password', { email: person.user.email });
    const unknown = await post(t.app, '/api/auth/forgot-password', { email: 'no-such-person@example.test' });
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.json()).toEqual(unknown.json());
    await resetLink(person.user.email);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.messages.some((m) => m.to.includes('no-such-person@example.test'))).toBe(false);
  });

  it('resets with the mailed link once, revoking every session', async () => {
    const person = await buildUser(db(), { mustChangePassword: true });
    const token = await signIn(t.app, person.user.email);
    await post(t.app, '/api/auth/forgot-password', { email: person.user.email });
    const link = await resetLink(person.user.email);
    const profile = (await post(t.app, '/api/user/refresh/profile', {}, token)).json().profile;
    expect(profile.resetCodeId).toMatch(/^[0-9a-f-]{36}$/);
    const reset = await post(t.app, '/api/auth/reset-password', { token: link, password: NEW_PASSWORD });
    expect(reset.statusCode).toBe(200);
    expect(await profileStatus(t.app, token)).toBe(401);
    const again = await post(t.app, '/api/auth/reset-password', { token: link, password: 'yet another passphrase' });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('INVALID_RESET_TOKEN');
    const signedIn = await signInRaw(t.app, person.user.email, NEW_PASSWORD);
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json().profile).toMatchObject({ mustChangePassword: false, resetCodeId: null });
  });

  it('refuses an expired link and an unknown one', async () => {
    const person = await buildUser(db());
    await post(t.app, '/api/auth/forgot-password', { email: person.user.email });
    const link = await resetLink(person.user.email);
    await db().update(passwordResets).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(passwordResets.userId, person.user.id));
    expect((await post(t.app, '/api/auth/reset-password', { token: link, password: NEW_PASSWORD })).statusCode).toBe(400);
    expect((await post(t.app, '/api/auth/reset-password', { token: 'made-up', password: NEW_PASSWORD })).statusCode).toBe(400);
    expect((await signInRaw(t.app, person.user.email, person.password)).statusCode).toBe(200);
  });
});

describe('sign-out', () => {
  it('revokes a session whose caller is cached, at once', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    expect(await profileStatus(t.app, token)).toBe(200);
    expect((await post(t.app, '/api/auth/signout', {}, token)).statusCode).toBe(200);
    expect(await profileStatus(t.app, token)).toBe(401);
  });
});
