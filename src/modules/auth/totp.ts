// Authenticator-app codes (RFC 6238: SHA-1, 6 digits, 30-second steps), as every authenticator app
// computes them. A code is matched within one step either side to allow for clock drift; the caller
// records the matched step so the same code is never accepted twice.
import { Secret, TOTP } from 'otpauth';

export const TOTP_ISSUER = 'Digital Twin';
const PERIOD = 30;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret: string, label = 'account'): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(secret) });
}

export function otpauthUrl(secret: string, email: string): string {
  return totp(secret, email).toString();
}

/** The time step the code belongs to, or null when it matches none within the window. */
export function matchTotp(secret: string, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(secret).validate({ token: code, window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}
