// Helpers for identity tests: an authenticator app as a person would use it (otpauth), mailed codes
// read from the test SMTP server, and the sign-in calls.
import { Secret, TOTP } from 'otpauth';
import type { App } from '../../src/platform/http/schemas.js';
import type { TestSmtpServer } from './smtp.js';

/** The 6-digit code an authenticator app shows, `offsetSteps` 30-second steps from now. */
export function authenticatorCode(secret: string, offsetSteps = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  return totp.generate({ timestamp: Date.now() + offsetSteps * 30_000 });
}

/** The newest code mailed to `email` (consumed from the server's queue). */
export async function mailedCode(smtp: TestSmtpServer, email: string): Promise<string> {
  const mail = await smtp.next((m) => m.to.includes(email.toLowerCase()) && /code/i.test(m.subject));
  const match = /\b(\d{6})\b/.exec(mail.text);
  if (!match) throw new Error(`no code in mail: ${mail.text}`);
  return match[1];
}

export function post(app: App, url: string, payload: object | undefined, token?: string, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url,
    payload: payload ?? {},
    headers: token ? { 'x-access-token': token, ...headers } : headers,
  });
}

export async function signInRaw(app: App, email: string, password: string, headers: Record<string, string> = {}) {
  return post(app, '/api/auth/signin', { email, password }, undefined, headers);
}

export async function profileStatus(app: App, token: string): Promise<number> {
  return (await post(app, '/api/user/refresh/profile', {}, token)).statusCode;
}
