// Small crypto helpers for tokens and one-time codes: hashing before storage,
// constant-time comparison, and random values drawn from the CSPRNG.
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** sha256 hex. Tokens and codes are high-entropy or short-lived, so a fast unsalted hash suffices. */
export function hashToken(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time string comparison; a length mismatch returns false early (length is not secret here). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** n decimal digits, uniform, zero-padded (e.g. a 6-digit mailed code). */
export function randomDigits(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new Error('randomDigits needs a positive integer length');
  let out = '';
  // One randomInt per digit: randomInt's range is capped at 2^48, so a single draw would limit n.
  for (let i = 0; i < n; i++) out += randomInt(0, 10).toString();
  return out;
}
