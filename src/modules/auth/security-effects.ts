// What a change to a person's sign-in security does, in one place for every route that makes it
// (password change and reset, the authenticator, and the administrator's PUT /api/admin/user/{userId}):
// a new password or a changed second factor revokes the person's other sessions, and every change
// drops the cached callers so it bites on the very next request.
import type { Executor } from '../../platform/db/client.js';
import { findUserById, updateUser, type NewUser } from '../users/users.repo.js';
import { deleteBackupCodes } from './mfa.repo.js';
import { hashPassword } from '../../platform/crypto/passwords.js';
import type { SessionCache } from './session-cache.js';
import { revokeUserSessions } from './sessions.repo.js';

export interface SecurityChange {
  /** On: a second factor is asked at sign-in (the authenticator when set up, else emailed codes). Off: none, and the authenticator is removed. */
  mfaEnabled?: boolean;
  /** On: every session of the person may only change the password until it is changed. */
  mustChangePassword?: boolean;
  /** A new password, in clear; it is hashed here. */
  password?: string;
  /** The caller's own session, kept when the person changes their own password or factor. */
  keepSessionId?: string;
  /** The second factor changed outside this function (authenticator confirmed, disabled or reset). */
  factorChanged?: boolean;
}

/**
 * Applies the change and its effects. Call it with the database (not an open transaction) or right
 * after committing, so the cache is dropped after the new state is visible. Returns the revoked session ids.
 */
export async function applySecurityChange(db: Executor, cache: Pick<SessionCache, 'invalidate'>, userId: string, change: SecurityChange): Promise<string[]> {
  const user = await findUserById(db, userId);
  if (!user) return [];
  const values: Partial<NewUser> = {};
  if (change.password !== undefined) values.passwordHash = await hashPassword(change.password);
  if (change.mustChangePassword !== undefined) values.mustChangePassword = change.mustChangePassword;
  let factorChanged = Boolean(change.factorChanged);
  if (change.mfaEnabled === true && !user.mfaEnabled) {
    values.mfaEnabled = true;
    values.mfaMethod = user.totpSecretSealed ? 'totp' : 'email';
    factorChanged = true;
  } else if (change.mfaEnabled === false && (user.mfaEnabled || user.totpSecretSealed)) {
    Object.assign(values, { mfaEnabled: false, mfaMethod: null, totpSecretSealed: null, totpPendingSealed: null, totpLastStep: null });
    await deleteBackupCodes(db, userId);
    factorChanged = true;
  }
  if (Object.keys(values).length > 0) await updateUser(db, userId, values);
  const revoked = change.password !== undefined || factorChanged ? await revokeUserSessions(db, userId, change.keepSessionId) : [];
  await cache.invalidate({ userId });
  return revoked;
}
