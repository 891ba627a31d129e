import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from './secrets.js';

describe('createSecretBox', () => {
  const box = createSecretBox(randomBytes(32));

  it('round-trips text, including unicode and the empty string', () => {
    for (const plaintext of ['JBSWY3DPEHPK3PXP', 'clé secrète ✓', '']) {
      expect(box.decrypt(box.encrypt(plaintext))).toBe(plaintext);
    }
  });

  it('produces the v1 format with a 12-byte IV and a 16-byte tag', () => {
    const parts = box.encrypt('hello').split('.');
    expect(parts).toHaveLength(4);
    expect(parts[0]).toBe('v1');
    expect(Buffer.from(parts[1], 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[2], 'base64url')).toHaveLength(16);
    for (const part of parts.slice(1)) expect(part).toMatch(/^[A-Za-z0-9_-]*$/);
  });

  it('uses a fresh IV each time, so equal plaintexts seal differently', () => {
    const sealed = Array.from({ length: 50 }, () => box.encrypt('same'));
    const ivs = new Set(sealed.map((s) => s.split('.')[1]));
    expect(ivs.size).toBe(50);
    expect(new Set(sealed).size).toBe(50);
  });

  it('detects tampering with the ciphertext, the tag or the IV', () => {
    const [version, iv, tag, ciphertext] = box.encrypt('top secret').split('.');
    const flip = (b64: string): string => {
      const bytes = Buffer.from(b64, 'base64url');
      bytes[0] ^= 0x01;
      return bytes.toString('base64url');
    };
    const tampered = [
      [version, iv, tag, flip(ciphertext)],
      [version, iv, flip(tag), ciphertext],
      [version, flip(iv), tag, ciphertext],
    ];
    for (const parts of tampered) {
      expect(() => box.decrypt(parts.join('.'))).toThrow(/wrong key or tampered/);
    }
  });

  it('refuses a wrong key', () => {
    const sealed = box.encrypt('top secret');
    const other = createSecretBox(randomBytes(32));
    expect(() => other.decrypt(sealed)).toThrow(/wrong key or tampered/);
  });

  it('refuses malformed input and unknown versions', () => {
    const sealed = box.encrypt('x');
    for (const bad of ['', 'garbage', sealed.replace(/^v1/, 'v2'), `${sealed}.extra`, 'v1.!!.??.**']) {
      expect(() => box.decrypt(bad)).toThrow(/malformed/);
    }
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });

  it('is not affected when the caller later overwrites its key buffer', () => {
    const key = randomBytes(32);
    const own = createSecretBox(key);
    const sealed = own.encrypt('still readable');
    key.fill(0);
    expect(own.decrypt(sealed)).toBe('still readable');
  });
});
