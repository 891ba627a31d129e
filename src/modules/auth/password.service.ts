// Passwords: change one's own (clears mustChangePassword), and forgot/reset by a mailed single-use
// link. "Forgot" answers the same whether or not the email has an account, and does its work after
// answering so the timing tells nothing either. A new password revokes the person's other sessions.
import { randomUUID } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, BadRequestError } from '../../platform/http/errors.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import { hashToken, randomToken } from '../../platform/crypto/hash.js';
import { findUserByEmail, findUserById, updateUser } from '../users/users.repo.js';
import type { ClientInfo } from './auth.service.js';
import { passwordResets } from './identity.tables.js';
import { verifyPassword } from '../../platform/crypto/passwords.js';
import { applySecurityChange } from './security-effects.js';
import type { SessionCache } from './session-cache.js';
import { throttled, type Throttle } from './throttle.js';

export const RESET_TTL_MS = 60 * 60 * 1000;
export const FORGOT_MESSAGE = 'If an account exists for this email, a link to reset the password has been sent';

export interface PasswordServiceDeps {
  db: Database;
  cache: SessionCache;
  mailer: Mailer;
  throttle: Throttle;
  publicUrl: string;
  /** Told about background failures (a mail that could not be sent). */
  onError?: (error: unknown) => void;
}

const isWrongPassword = (error: unknown) => error instanceof AppError && error.code === 'INVALID_PASSWORD';

export function createPasswordService({ db, cache, mailer, throttle, publicUrl, onError }: PasswordServiceDeps) {
  async function sendResetLink(email: string): Promise<void> {
    const user = await findUserByEmail(db, email);
    if (!user || user.status === 'inactive' || user.status === 'deleted') return;
    const token = randomToken(32);
    await db.insert(passwordResets).values({ userId: user.id, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + RESET_TTL_MS) });
    await updateUser(db, user.id, { resetCodeId: randomUUID() });
    const link = `${publicUrl}/reset-password?token=${encodeURIComponent(token)}`;
    await mailer.send({
      to: user.email,
      subject: 'Reset your password',
      // The token also stands alone on a short line (every line but the link's under 76 characters): the
      // long link makes the mail quoted-printable, which folds it and writes its '=' as '=3D' in an .eml.
      text:
        `Someone asked to reset the password of this account.\n\nTo choose a new password, open:\n${link}\n\n` +
        `Reset token (for POST /api/auth/reset-password):\n${token}\n\n` +
        `The link and the token work once and expire in one hour.\nIf it was not you, ignore this mail.\n`,
    });
  }

  return {
    async change(actor: Actor, input: { currentPassword: string; newPassword: string }, client: ClientInfo): Promise<void> {
      const user = await findUserById(db, actor.userId);
      if (!user) throw new BadRequestError('User not found');
      if (!user.passwordHash) {
        throw new BadRequestError('This account has no password yet; use "forgot password" to set one', 'NO_PASSWORD');
      }
      await throttled(
        throttle,
        { account: user.email, ip: client.ip },
        async () => {
          if (!(await verifyPassword(user.passwordHash, input.currentPassword))) {
            throw new BadRequestError('Current password is incorrect', 'INVALID_PASSWORD');
          }
        },
        isWrongPassword,
      );
      await applySecurityChange(db, cache, user.id, { password: input.newPassword, mustChangePassword: false, keepSessionId: actor.sessionId });
    },

    /** Answers at once; the lookup and the mail happen afterwards. Throttled per address. */
    async forgot(email: string, client: ClientInfo): Promise<void> {
      // Requests count against their own counters, not against the sign-in failures.
      const keys = { ip: `reset:${client.ip}`, account: `reset:${email.toLowerCase()}` };
      await throttle.check(keys);
      await throttle.fail(keys);
      setImmediate(() => {
        sendResetLink(email).catch((error: unknown) => onError?.(error));
      });
    },

    async reset(token: string, password: string): Promise<void> {
      const now = new Date();
      const [claimed] = await db
        .update(passwordResets)
        .set({ usedAt: now })
        .where(and(eq(passwordResets.tokenHash, hashToken(token)), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)))
        .returning({ userId: passwordResets.userId });
      const user = claimed && (await findUserById(db, claimed.userId));
      if (!user) throw new BadRequestError('This reset link is invalid or has expired', 'INVALID_RESET_TOKEN');
      // Other links sent before stop working too.
      await db.update(passwordResets).set({ usedAt: now }).where(and(eq(passwordResets.userId, user.id), isNull(passwordResets.usedAt)));
      await updateUser(db, user.id, { resetCodeId: null });
      await applySecurityChange(db, cache, user.id, { password, mustChangePassword: false });
    },
  };
}

export type PasswordService = ReturnType<typeof createPasswordService>;
