// Launch tokens for pages that embed a twin: a twin administrator signs a short-lived, single-use
// token for one person (POST /api/auth/sdk-sign); the page exchanges it for a session restricted to
// that twin (POST /api/auth/sdk-verify, behaviour 16). The person's account is created when new and
// joins the twin as a user; an existing role is never lowered.
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';
import { withTransaction } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { ForbiddenError, UnauthorizedError } from '../../platform/http/errors.js';
import { requireAccess } from '../access/access.js';
import { hashToken, randomToken } from '../../platform/crypto/hash.js';
import { findTwinById, findMembership, insertMembership } from '../twins/twins.repo.js';
import { findUserByEmail } from '../users/users.repo.js';
import { insertAccount } from '../credits/starting-credits.js';
import type { AuthService, ClientInfo, SignedIn } from './auth.service.js';
import { launchTokens } from './identity.tables.js';

export const LAUNCH_TOKEN_DEFAULT_SECONDS = 300;
export const LAUNCH_TOKEN_MAX_SECONDS = 3600;
const TOKEN_PREFIX = 'lt_';

export interface LaunchInput {
  email: string;
  fname?: string;
  lname?: string;
  role?: 'user';
  expiresIn?: number;
}

export function createLaunchService({ db, auth, startingCredits }: { db: Database; auth: AuthService; startingCredits: number }) {
  return {
    async sign(actor: Actor, input: LaunchInput): Promise<{ token: string; expiresAt: Date }> {
      await requireAccess(db, actor, 'launch.sign', {});
      const twin = actor.twinId!;
      const token = TOKEN_PREFIX + randomToken(32);
      const expiresAt = new Date(Date.now() + (input.expiresIn ?? LAUNCH_TOKEN_DEFAULT_SECONDS) * 1000);
      await db.insert(launchTokens).values({
        twinId: twin,
        tokenHash: hashToken(token),
        email: input.email.toLowerCase(),
        fname: input.fname ?? '',
        lname: input.lname ?? '',
        createdBy: actor.userId,
        expiresAt,
      });
      return { token, expiresAt };
    },

    /**
     * Opens the launch session a token names. With `twinId` (an embedding page of that twin), a token of
     * another twin is refused with 403 LAUNCH_TOKEN_OTHER_TWIN and stays unused.
     */
    async verify(token: string, client: ClientInfo, expected: { twinId?: string } = {}): Promise<SignedIn> {
      const invalid = () => new UnauthorizedError('This launch token is invalid, used or expired', 'INVALID_LAUNCH_TOKEN');
      if (!token.startsWith(TOKEN_PREFIX)) throw invalid();
      const now = new Date();
      const usable = and(eq(launchTokens.tokenHash, hashToken(token)), isNull(launchTokens.usedAt), gt(launchTokens.expiresAt, now));
      // Single use: the token is claimed by one atomic update.
      const [claimed] = await db
        .update(launchTokens)
        .set({ usedAt: now })
        .where(expected.twinId ? and(usable, eq(launchTokens.twinId, expected.twinId)) : usable)
        .returning();
      if (!claimed) {
        const [elsewhere] = expected.twinId ? await db.select({ id: launchTokens.id }).from(launchTokens).where(usable).limit(1) : [];
        if (elsewhere) throw new ForbiddenError('This launch token was signed for another Digital Twin', 'LAUNCH_TOKEN_OTHER_TWIN');
        throw invalid();
      }
      const twin = await findTwinById(db, claimed.twinId);
      if (!twin || twin.status !== 'active') throw invalid();
      const user = await withTransaction(db, async (tx) => {
        const found =
          (await findUserByEmail(tx, claimed.email)) ??
          (await insertAccount(tx, { email: claimed.email, fname: claimed.fname, lname: claimed.lname, currentTwinId: twin.id }, startingCredits));
        if (!(await findMembership(tx, found.id, twin.id))) await insertMembership(tx, { twinId: twin.id, userId: found.id, role: 'user' });
        return found;
      });
      if (user.status === 'inactive' || user.status === 'deleted') throw new ForbiddenError('This account is inactive', 'ACCOUNT_INACTIVE');
      return auth.openSession(user, client, { kind: 'launch', twinId: twin.id });
    },
  };
}

export type LaunchService = ReturnType<typeof createLaunchService>;
