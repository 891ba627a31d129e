// Password hashing with argon2id. A sign-in for an unknown email still verifies against a fixed hash,
// so the answer takes the same time whether or not the account exists.
import { hash, verify } from '@node-rs/argon2';

// algorithm 2 is Argon2id (a const enum in the package's types, so it is written as its value).
const OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };
let dummyHash: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  if (!passwordHash) {
    dummyHash ??= hash('not-a-real-password', OPTIONS);
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}

export const PASSWORD_RULE = { min: 8, max: 256 } as const;
