// Two-step verification end to end: an authenticator app (otpauth computing codes as a phone would),
// codes mailed to a real SMTP server, backup codes, and the rules of each.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { authenticatorCode, mailedCode, post, profileStatus, signInRaw } from '../../../test/support/identity.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';
import { users } from '../users/users.tables.js';
import { mfaBackupCodes, mfaChallenges } from './identity.tables.js';

let t: TestApp;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const db = () => t.platform.database.db;
const userRow = async (id: string) => (await db().select().from(users).where(eq(users.id, id)))[0];

/** A person with a confirmed authenticator: their secret, backup codes and a session. */
async function enrolled(): Promise<{ person: BuiltUser; secret: string; backupCodes: string[]; token: string }> {
  const person = await buildUser(db());
  const token = await signIn(t.app, person.user.email);
  const setup = await post(t.app, '/api/user/me/totp/setup', {}, token);
  const { secret } = setup.json();
  const confirm = await post(t.app, '/api/user/me/totp/confirm', { code: authenticatorCode(secret) }, token);
  expect(confirm.statusCode).toBe(200);
  return { person, secret, backupCodes: confirm.json().backupCodes, token };
}

async function startSignIn(person: BuiltUser) {
  const response = await signInRaw(t.app, person.user.email, person.password);
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('authenticator app setup', () => {
  it('makes a pending secret and an otpauth URL, sealed at rest, not yet enabled', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    const response = await post(t.app, '/api/user/me/totp/setup', {}, token);
    expect(response.statusCode).toBe(200);
    const { secret, otpauthUrl } = response.json();
    expect(secret).toMatch(/^[A-Z2-7]+=*$/);
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
    expect(otpauthUrl).toContain(`secret=${secret}`);
    const row = await userRow(person.user.id);
    expect(row.totpPendingSealed).toBeTruthy();
    expect(row.totpPendingSealed).not.toContain(secret);
    expect(row.mfaEnabled).toBe(false);
  });

  it('refuses a wrong code with 400 and leaves the factor pending', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    const { secret } = (await post(t.app, '/api/user/me/totp/setup', {}, token)).json();
    const right = authenticatorCode(secret);
    const wrong = right === '000000' ? '111111' : '000000';
    const response = await post(t.app, '/api/user/me/totp/confirm', { code: wrong }, token);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'INVALID_CODE' });
    const row = await userRow(person.user.id);
    expect(row).toMatchObject({ mfaEnabled: false, mfaMethod: null, totpSecretSealed: null });
    expect(row.totpPendingSealed).toBeTruthy();
    // Still pending: the right code now works.
    expect((await post(t.app, '/api/user/me/totp/confirm', { code: right }, token)).statusCode).toBe(200);
  });

  it('activates on the right code with 10 backup codes, stored hashed, shown once', async () => {
    const { person, secret, backupCodes, token } = await enrolled();
    expect(backupCodes).toHaveLength(10);
    expect(new Set(backupCodes).size).toBe(10);
    const profile = (await post(t.app, '/api/user/refresh/profile', {}, token)).json().profile;
    expect(profile).toMatchObject({ mfaEnabled: true, mfaMethod: 'totp' });
    const row = await userRow(person.user.id);
    expect(row.totpPendingSealed).toBeNull();
    expect(row.totpSecretSealed).toBeTruthy();
    expect(row.totpSecretSealed).not.toContain(secret);
    const stored = await db().select().from(mfaBackupCodes).where(eq(mfaBackupCodes.userId, person.user.id));
    expect(stored).toHaveLength(10);
    for (const code of backupCodes) expect(stored.some((s) => s.codeHash.includes(code.replace('-', '')))).toBe(false);
  });

  it('refuses confirm without a pending setup', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    const response = await post(t.app, '/api/user/me/totp/confirm', { code: '123456' }, token);
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('NO_PENDING_TOTP');
  });

  it('revokes the other sessions when the factor is confirmed', async () => {
    const person = await buildUser(db());
    const other = await signIn(t.app, person.user.email);
    const token = await signIn(t.app, person.user.email);
    const { secret } = (await post(t.app, '/api/user/me/totp/setup', {}, token)).json();
    expect((await post(t.app, '/api/user/me/totp/confirm', { code: authenticatorCode(secret) }, token)).statusCode).toBe(200);
    expect(await profileStatus(t.app, other)).toBe(401);
    expect(await profileStatus(t.app, token)).toBe(200);
  });
});

describe('sign-in with the authenticator', () => {
  it('asks for the second factor with no session, then signs in with a TOTP code', async () => {
    const { person, secret } = await enrolled();
    const started = await startSignIn(person);
    expect(started).toMatchObject({ success: true, mfaRequired: true, mfaMethod: 'totp', methods: ['totp', 'email', 'backup'] });
    expect(started).not.toHaveProperty('token');
    // The mfaToken is not a session.
    expect(await profileStatus(t.app, started.mfaToken)).toBe(401);
    const verified = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code: authenticatorCode(secret, 1) });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().profile._id).toBe(person.user.id);
    expect(await profileStatus(t.app, verified.json().token)).toBe(200);
  });

  it('refuses a TOTP code replayed in its window', async () => {
    const { person, secret } = await enrolled();
    const code = authenticatorCode(secret, 1);
    const first = await startSignIn(person);
    expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: first.mfaToken, code })).statusCode).toBe(200);
    const second = await startSignIn(person);
    const replay = await post(t.app, '/api/auth/mfa-verify', { mfaToken: second.mfaToken, code });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ success: false, code: 'INVALID_CODE' });
  });

  it('refuses the code used to confirm the app', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    const { secret } = (await post(t.app, '/api/user/me/totp/setup', {}, token)).json();
    const code = authenticatorCode(secret);
    expect((await post(t.app, '/api/user/me/totp/confirm', { code }, token)).statusCode).toBe(200);
    const started = await startSignIn(person);
    expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code })).statusCode).toBe(400);
  });

  it('accepts a backup code once', async () => {
    const { person, backupCodes } = await enrolled();
    const first = await startSignIn(person);
    const ok = await post(t.app, '/api/auth/mfa-verify', { mfaToken: first.mfaToken, code: backupCodes[3].toUpperCase(), method: 'backup' });
    expect(ok.statusCode).toBe(200);
    const second = await startSignIn(person);
    const again = await post(t.app, '/api/auth/mfa-verify', { mfaToken: second.mfaToken, code: backupCodes[3], method: 'backup' });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('INVALID_CODE');
    // Another unused one still works on the same pending sign-in (the wrong try did not end it).
    expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: second.mfaToken, code: backupCodes[4], method: 'backup' })).statusCode).toBe(200);
  });

  it('switches to an emailed code on resend', async () => {
    const { person } = await enrolled();
    const started = await startSignIn(person);
    const resent = await post(t.app, '/api/auth/mfa-resend', { mfaToken: started.mfaToken });
    expect(resent.statusCode).toBe(200);
    const code = await mailedCode(smtp, person.user.email);
    const challenge = (await db().select().from(mfaChallenges).where(eq(mfaChallenges.userId, person.user.id))).at(-1)!;
    expect(challenge.method).toBe('email');
    expect(challenge.codeHash).not.toContain(code);
    expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code })).statusCode).toBe(200);
  });

  it('turns off with a current code: sign-in then needs no second factor', async () => {
    const { person, secret, token } = await enrolled();
    const wrong = await post(t.app, '/api/user/me/totp/disable', { code: '000000' === authenticatorCode(secret, 1) ? '111111' : '000000' }, token);
    expect(wrong.statusCode).toBe(400);
    expect((await post(t.app, '/api/user/me/totp/disable', { code: authenticatorCode(secret, 1) }, token)).statusCode).toBe(200);
    const response = await signInRaw(t.app, person.user.email, person.password);
    expect(response.json().token).toEqual(expect.any(String));
    expect(response.json().profile).toMatchObject({ mfaEnabled: false, mfaMethod: null });
  });
});

describe('emailed codes', () => {
  it('mails a code to a person with two-step verification and no authenticator', async () => {
    const person = await buildUser(db(), { mfaEnabled: true, mfaMethod: 'email' });
    const started = await startSignIn(person);
    expect(started).toMatchObject({ mfaRequired: true, mfaMethod: 'email', methods: ['email'] });
    const code = await mailedCode(smtp, person.user.email);
    const ok = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code });
    expect(ok.statusCode).toBe(200);
    // Single use: the same code again ends nowhere.
    const again = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code });
    expect(again.statusCode).toBe(401);
    expect(again.json().code).toBe('MFA_EXPIRED');
  });

  it('refuses an expired code', async () => {
    const person = await buildUser(db(), { mfaEnabled: true });
    const started = await startSignIn(person);
    const code = await mailedCode(smtp, person.user.email);
    await db().update(mfaChallenges).set({ codeExpiresAt: new Date(Date.now() - 1000) }).where(eq(mfaChallenges.userId, person.user.id));
    const response = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'CODE_EXPIRED' });
  });

  it('replaces the code on resend: the old one stops working', async () => {
    const person = await buildUser(db(), { mfaEnabled: true });
    const started = await startSignIn(person);
    const old = await mailedCode(smtp, person.user.email);
    await post(t.app, '/api/auth/mfa-resend', { mfaToken: started.mfaToken });
    const fresh = await mailedCode(smtp, person.user.email);
    if (old !== fresh) expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code: old })).statusCode).toBe(400);
    expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code: fresh })).statusCode).toBe(200);
  });

  it('ends the pending sign-in after 5 wrong codes', async () => {
    const person = await buildUser(db(), { mfaEnabled: true });
    const started = await startSignIn(person);
    const code = await mailedCode(smtp, person.user.email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code: wrong })).statusCode).toBe(400);
    }
    const right = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code });
    expect(right.statusCode).toBe(401);
    expect(right.json().code).toBe('MFA_EXPIRED');
  });

  it('refuses a session token or a forged value as mfaToken', async () => {
    const person = await buildUser(db());
    const token = await signIn(t.app, person.user.email);
    for (const mfaToken of [token, 'abc.def.ghi']) {
      const response = await post(t.app, '/api/auth/mfa-verify', { mfaToken, code: '123456' });
      expect(response.statusCode).toBe(401);
    }
  });
});
