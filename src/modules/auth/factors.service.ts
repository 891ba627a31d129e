// The authenticator-app factor of one's own account: setup (pending secret), confirm (active, with
// 10 backup codes shown once) and disable; and the administrator's reset. Secrets are sealed at rest,
// backup codes stored hashed. Changing the factor revokes the person's other sessions.
import type { Database } from '../../platform/db/client.js';
import { withTransaction } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { requireAccess } from '../access/access.js';
import { findUserById, updateUser } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';
import type { ClientInfo } from './auth.service.js';
import { hashBackupCode, newBackupCodes } from './codes.js';
import { claimTotpStep, consumeBackupCode, deleteBackupCodes, replaceBackupCodes } from './mfa.repo.js';
import { applySecurityChange } from './security-effects.js';
import type { SessionCache } from './session-cache.js';
import { throttled, type Throttle } from './throttle.js';
import { matchTotp, newTotpSecret, otpauthUrl } from './totp.js';

export interface FactorServiceDeps {
  db: Database;
  secrets: SecretBox;
  cache: SessionCache;
  throttle: Throttle;
}

const invalidCode = () => new BadRequestError('Invalid code', 'INVALID_CODE');
const isWrongCode = (error: unknown) => error instanceof AppError && error.code === 'INVALID_CODE';

export function createFactorService({ db, secrets, cache, throttle }: FactorServiceDeps) {
  async function self(actor: Actor): Promise<UserRow> {
    const user = await findUserById(db, actor.userId);
    if (!user) throw new NotFoundError('User not found');
    return user;
  }

  const removal = { totpSecretSealed: null, totpPendingSealed: null, totpLastStep: null } as const;

  return {
    async setup(actor: Actor): Promise<{ secret: string; otpauthUrl: string }> {
      const user = await self(actor);
      const secret = newTotpSecret();
      await updateUser(db, user.id, { totpPendingSealed: secrets.encrypt(secret) });
      return { secret, otpauthUrl: otpauthUrl(secret, user.email) };
    },

    async confirm(actor: Actor, code: string, client: ClientInfo): Promise<string[]> {
      const user = await self(actor);
      if (!user.totpPendingSealed) throw new BadRequestError('No authenticator setup is pending; start with totp/setup', 'NO_PENDING_TOTP');
      const pending = user.totpPendingSealed;
      const step = await throttled(
        throttle,
        { account: user.email, ip: client.ip },
        async () => matchTotp(secrets.decrypt(pending), code) ?? Promise.reject(invalidCode()),
        isWrongCode,
      );
      const backupCodes = newBackupCodes();
      await withTransaction(db, async (tx) => {
        await updateUser(tx, user.id, { totpSecretSealed: pending, totpPendingSealed: null, totpLastStep: step, mfaMethod: 'totp', mfaEnabled: true });
        await replaceBackupCodes(tx, user.id, backupCodes.map(hashBackupCode));
      });
      await applySecurityChange(db, cache, user.id, { factorChanged: true, keepSessionId: actor.sessionId });
      return backupCodes;
    },

    /** Needs a current authenticator code or an unused backup code. */
    async disable(actor: Actor, code: string, client: ClientInfo): Promise<void> {
      const user = await self(actor);
      if (!user.totpSecretSealed) throw new BadRequestError('No authenticator app is set up', 'METHOD_UNAVAILABLE');
      const sealed = user.totpSecretSealed;
      await throttled(
        throttle,
        { account: user.email, ip: client.ip },
        async () => {
          const step = matchTotp(secrets.decrypt(sealed), code.trim());
          if (step !== null && (await claimTotpStep(db, user.id, step))) return;
          if (await consumeBackupCode(db, user.id, hashBackupCode(code))) return;
          throw invalidCode();
        },
        isWrongCode,
      );
      await applySecurityChange(db, cache, user.id, { mfaEnabled: false, keepSessionId: actor.sessionId });
    },

    /**
     * POST /api/admin/user/{userId}/mfa/reset: removes the authenticator and backup codes. A person
     * with two-step verification on keeps it, with emailed codes, until they set up a new app.
     */
    async adminReset(actor: Actor, userId: string): Promise<void> {
      const found = await findUserById(db, userId);
      await requireAccess(db, actor, 'user.reset-factors', { user: found });
      const target = found!;
      await withTransaction(db, async (tx) => {
        await updateUser(tx, target.id, { ...removal, mfaMethod: target.mfaEnabled ? 'email' : null });
        await deleteBackupCodes(tx, target.id);
      });
      await applySecurityChange(db, cache, target.id, { factorChanged: true });
    },
  };
}

export type FactorService = ReturnType<typeof createFactorService>;
