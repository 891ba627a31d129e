import { describe, expect, it } from 'vitest';
import { hashToken, randomDigits, randomToken, safeEqual } from './hash.js';

describe('hashToken', () => {
  it('is sha256 hex and deterministic', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken('abc')).toBe(hashToken('abc'));
    expect(hashToken('abd')).not.toBe(hashToken('abc'));
  });
});

describe('safeEqual', () => {
  it('compares equal and unequal strings of the same length', () => {
    expect(safeEqual('123456', '123456')).toBe(true);
    expect(safeEqual('123456', '123457')).toBe(false);
  });

  it('returns false on a length mismatch instead of throwing', () => {
    expect(safeEqual('123456', '1234567')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
    // Same character count, different byte length.
    expect(safeEqual('é', 'e')).toBe(false);
  });
});

describe('randomToken', () => {
  it('is base64url of the requested byte count and unique', () => {
    const token = randomToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(Buffer.from(randomToken(16), 'base64url')).toHaveLength(16);
    expect(new Set(Array.from({ length: 100 }, () => randomToken())).size).toBe(100);
  });
});

describe('randomDigits', () => {
  it('returns exactly n digits, keeping leading zeros', () => {
    const codes = Array.from({ length: 2000 }, () => randomDigits(6));
    for (const code of codes) expect(code).toMatch(/^\d{6}$/);
    // With 2000 draws, a code starting with 0 is all but certain (1 - 0.9^2000).
    expect(codes.some((c) => c.startsWith('0'))).toBe(true);
    expect(randomDigits(1)).toMatch(/^\d$/);
    expect(randomDigits(30)).toMatch(/^\d{30}$/);
  });

  it('rejects a non-positive or fractional length', () => {
    expect(() => randomDigits(0)).toThrow();
    expect(() => randomDigits(2.5)).toThrow();
  });
});
