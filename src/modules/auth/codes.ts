// One-time codes and their mails: 6-digit emailed codes and the 10 backup codes shown once.
// Backup codes use an alphabet without look-alike characters and are compared without case or dashes.
import { randomInt } from 'node:crypto';
import type { Mailer } from '../../platform/mail/mailer.js';
import { hashToken, randomDigits } from '../../platform/crypto/hash.js';

export const EMAIL_CODE_TTL_MS = 10 * 60 * 1000;
export const BACKUP_CODE_COUNT = 10;
const BACKUP_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export function newEmailCode(): { code: string; hash: string } {
  const code = randomDigits(6);
  return { code, hash: hashToken(code) };
}

export function newBackupCodes(): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, () => {
    let raw = '';
    for (let i = 0; i < 10; i++) raw += BACKUP_ALPHABET[randomInt(0, BACKUP_ALPHABET.length)];
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
}

export function hashBackupCode(code: string): string {
  return hashToken(code.toLowerCase().replace(/[\s-]/g, ''));
}

export async function mailSignInCode(mailer: Mailer, to: string, code: string): Promise<void> {
  await mailer.send({
    to,
    subject: `Your sign-in code: ${code}`,
    text:
      `Your sign-in code is ${code}\n\nIt expires in 10 minutes and works once.\n` +
      `If you did not try to sign in, someone may know your password: change it.\n`,
  });
}
