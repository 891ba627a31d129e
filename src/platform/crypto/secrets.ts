// Encryption of secrets at rest (TOTP secrets, provider tokens, MCP credentials) with AES-256-GCM.
// The sealed form is versioned text, `v1.<iv>.<tag>.<ciphertext>` in base64url, so it fits a text
// column and a later key or algorithm change can be told apart from old rows.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
}

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
// 12 bytes is the IV size GCM is designed for; a fresh one per message, since reuse under one key breaks GCM.
const IV_BYTES = 12;
const TAG_BYTES = 16;
const B64URL = /^[A-Za-z0-9_-]*$/;

export function createSecretBox(key: Buffer): SecretBox {
  if (!Buffer.isBuffer(key) || key.length !== 32) {
    throw new Error('SecretBox key must be exactly 32 bytes');
  }
  // Keep a private copy so a caller zeroing or reusing its buffer cannot change our key.
  const secretKey = Buffer.from(key);

  return {
    encrypt(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, secretKey, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
    },

    decrypt(sealed) {
      const parts = typeof sealed === 'string' ? sealed.split('.') : [];
      if (parts.length !== 4 || parts[0] !== VERSION || !parts.slice(1).every((p) => B64URL.test(p))) {
        throw new Error('Sealed secret is malformed or has an unknown version');
      }
      const iv = Buffer.from(parts[1], 'base64url');
      const tag = Buffer.from(parts[2], 'base64url');
      const ciphertext = Buffer.from(parts[3], 'base64url');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
        throw new Error('Sealed secret is malformed or has an unknown version');
      }
      try {
        const decipher = createDecipheriv(ALGORITHM, secretKey, iv, { authTagLength: TAG_BYTES });
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        // GCM cannot tell a wrong key from tampered data; both mean "do not trust this value".
        throw new Error('Sealed secret failed authentication: wrong key or tampered data');
      }
    },
  };
}
