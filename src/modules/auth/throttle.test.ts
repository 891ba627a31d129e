// Throttling of sign-in failures: per account and per address, 429 in the failure shape, the same
// failure message for a wrong email and a wrong password, and the request rate of /api/auth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser } from '../../../test/support/factories.js';
import { mailedCode, post, signInRaw } from '../../../test/support/identity.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';

let t: TestApp;
let smtp: TestSmtpServer;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({
    // The tests speak from several addresses through a trusted proxy's X-Forwarded-For.
    env: { SMTP_URL: smtp.url, TRUST_PROXY: 'true' },
    authLimits: { accountFailures: 3, ipFailures: 6, codeAttempts: 10, requestsPerMinute: 10_000 },
  });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

describe('failed passwords', () => {
  it('answer 429 for the account after the limit, even with the right password', async () => {
    const person = await buildUser(t.platform.database.db);
    for (let i = 0; i < 3; i++) {
      const response = await signInRaw(t.app, person.user.email, 'wrong password', from(`10.1.0.${i}`));
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ success: false, message: 'Invalid email or password' });
    }
    const blocked = await signInRaw(t.app, person.user.email, person.password, from('10.1.0.9'));
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    expect(blocked.headers['retry-after']).toBeDefined();
    // Another account is not affected.
    const other = await buildUser(t.platform.database.db);
    expect((await signInRaw(t.app, other.user.email, other.password, from('10.1.0.9'))).statusCode).toBe(200);
  });

  it('answer 429 for the address after the limit, whichever accounts were tried', async () => {
    for (let i = 0; i < 6; i++) {
      const response = await signInRaw(t.app, `nobody-${i}@example.test`, 'wrong password', from('10.2.0.1'));
      expect(response.statusCode).toBe(401);
    }
    const person = await buildUser(t.platform.database.db);
    expect((await signInRaw(t.app, person.user.email, person.password, from('10.2.0.1'))).statusCode).toBe(429);
    expect((await signInRaw(t.app, person.user.email, person.password, from('10.2.0.2'))).statusCode).toBe(200);
  });

  it('never tell which of email or password was wrong', async () => {
    const person = await buildUser(t.platform.database.db);
    const wrongPassword = await signInRaw(t.app, person.user.email, 'wrong password', from('10.3.0.1'));
    const unknownEmail = await signInRaw(t.app, 'ghost-throttle@example.test', person.password, from('10.3.0.2'));
    expect(wrongPassword.json()).toEqual(unknownEmail.json());
  });

  it('restart counting after a successful sign-in', async () => {
    const person = await buildUser(t.platform.database.db);
    for (let i = 0; i < 2; i++) await signInRaw(t.app, person.user.email, 'wrong password', from('10.4.0.1'));
    expect((await signInRaw(t.app, person.user.email, person.password, from('10.4.0.1'))).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) await signInRaw(t.app, person.user.email, 'wrong password', from('10.4.0.2'));
    expect((await signInRaw(t.app, person.user.email, person.password, from('10.4.0.2'))).statusCode).toBe(200);
  });
});

describe('failed codes', () => {
  it('answer 429 for the account after the limit', async () => {
    const person = await buildUser(t.platform.database.db, { mfaEnabled: true });
    const started = (await signInRaw(t.app, person.user.email, person.password, from('10.5.0.1'))).json();
    const code = await mailedCode(smtp, person.user.email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 3; i++) {
      expect((await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code: wrong }, undefined, from(`10.5.1.${i}`))).statusCode).toBe(400);
    }
    const blocked = await post(t.app, '/api/auth/mfa-verify', { mfaToken: started.mfaToken, code }, undefined, from('10.5.2.1'));
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().success).toBe(false);
  });

  it('count wrong current passwords on password change', async () => {
    const person = await buildUser(t.platform.database.db);
    const token = (await signInRaw(t.app, person.user.email, person.password, from('10.6.0.1'))).json().token;
    for (let i = 0; i < 3; i++) {
      const response = await post(t.app, '/api/user/me/password', { currentPassword: 'not it at all', newPassword: 'a new long password' }, token, from('10.6.0.1'));
      expect(response.statusCode).toBe(400);
      expect(response.json().code).toBe('INVALID_PASSWORD');
    }
    const blocked = await post(t.app, '/api/user/me/password', { currentPassword: person.password, newPassword: 'a new long password' }, token, from('10.6.0.1'));
    expect(blocked.statusCode).toBe(429);
  });
});

describe('request rate of /api/auth', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ env: { TRUST_PROXY: 'true' }, authLimits: { requestsPerMinute: 3 } });
  });
  afterAll(() => strict.close());

  it('answers 429 in the failure shape past the per-minute limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await post(strict.app, '/api/auth/forgot-password', { email: `x${i}@example.test` }, undefined, from('10.7.0.1'))).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const last = await post(strict.app, '/api/auth/forgot-password', { email: 'y@example.test' }, undefined, from('10.7.0.1'));
    expect(last.json()).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    expect((await post(strict.app, '/api/auth/forgot-password', { email: 'y@example.test' }, undefined, from('10.7.0.2'))).statusCode).toBe(200);
  });
});

describe('without a trusted proxy', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await startTestApp({ authLimits: { requestsPerMinute: 3 } });
  });
  afterAll(() => plain.close());

  it('ignores X-Forwarded-For, so a forged address does not escape the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await post(plain.app, '/api/auth/forgot-password', { email: `z${i}@example.test` }, undefined, from(`10.9.0.${i}`))).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
