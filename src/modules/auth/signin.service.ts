// Sign-in with a second factor, and the launch-scope step-up that uses the same codes.
// A password sign-in of an account with mfaEnabled opens no session: it answers an mfaToken naming a
// pending challenge, completed by a TOTP, an emailed or a backup code. Wrong passwords and codes are
// throttled per account and per address; a few wrong codes end the pending sign-in.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError, BadRequestError, TooManyRequestsError, UnauthorizedError } from '../../platform/http/errors.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { hashToken, safeEqual } from '../../platform/crypto/hash.js';
import { findUserById, updateUser } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';
import { findMembership } from '../twins/twins.repo.js';
import type { AuthService, ClientInfo, SignedIn } from './auth.service.js';
import { EMAIL_CODE_TTL_MS, hashBackupCode, mailSignInCode, newEmailCode } from './codes.js';
import type { MfaChallengeRow } from './identity.tables.js';
import {
  addChallengeAttempt,
  claimTotpStep,
  consumeBackupCode,
  consumeChallenge,
  countUnusedBackupCodes,
  findChallenge,
  findOpenLaunchChallenge,
  insertChallenge,
  updateChallenge,
} from './mfa.repo.js';
import type { SessionCache } from './session-cache.js';
import { revokeSession } from './sessions.repo.js';
import { throttled, type Throttle } from './throttle.js';
import type { TokenSigner } from './tokens.js';
import { matchTotp } from './totp.js';

export const CHALLENGE_TTL_SECONDS = 15 * 60;
export type MfaMethod = 'totp' | 'email' | 'backup';

export interface MfaRequired {
  success: true;
  mfaRequired: true;
  mfaToken: string;
  mfaMethod: 'totp' | 'email';
  methods: MfaMethod[];
}

export interface SignInServiceDeps {
  db: Database;
  auth: AuthService;
  throttle: Throttle;
  /** Signs mfaTokens: a purpose of their own, so a session token is never taken for one. */
  mfaTokens: TokenSigner;
  mailer: Mailer;
  secrets: SecretBox;
  cache: SessionCache;
}

const invalidCode = () => new BadRequestError('Invalid code', 'INVALID_CODE');
const challengeOver = () => new UnauthorizedError('This sign-in has expired or ended; sign in again', 'MFA_EXPIRED');
const isWrongCode = (error: unknown) => error instanceof AppError && (error.code === 'INVALID_CODE' || error.code === 'CODE_EXPIRED');
const isWrongPassword = (error: unknown) => error instanceof AppError && error.code === 'INVALID_CREDENTIALS';

export function createSignInService(deps: SignInServiceDeps) {
  const { db, auth, throttle, mfaTokens, mailer, secrets } = deps;

  async function methodsOf(user: UserRow): Promise<MfaMethod[]> {
    const methods: MfaMethod[] = user.totpSecretSealed ? ['totp', 'email'] : ['email'];
    if ((await countUnusedBackupCodes(db, user.id)) > 0) methods.push('backup');
    return methods;
  }

  async function sendCode(challenge: MfaChallengeRow, user: UserRow): Promise<void> {
    if (challenge.sends >= throttle.limits.codeSends) throw new TooManyRequestsError('Too many codes sent; sign in again later');
    const { code, hash } = newEmailCode();
    await updateChallenge(db, challenge.id, {
      method: 'email',
      codeHash: hash,
      codeExpiresAt: new Date(Date.now() + EMAIL_CODE_TTL_MS),
      sends: challenge.sends + 1,
    });
    await mailSignInCode(mailer, user.email, code);
  }

  async function openChallenge(user: UserRow, values: { purpose: 'signin' | 'launch'; sessionId?: string; twinId?: string | null }) {
    const method: 'totp' | 'email' = user.mfaMethod === 'totp' && user.totpSecretSealed && values.purpose === 'signin' ? 'totp' : 'email';
    const challenge = await insertChallenge(db, {
      userId: user.id,
      purpose: values.purpose,
      method,
      sessionId: values.sessionId,
      twinId: values.twinId ?? null,
      expiresAt: new Date(Date.now() + CHALLENGE_TTL_SECONDS * 1000),
    });
    if (method === 'email') await sendCode(challenge, user);
    const mfaToken = await mfaTokens.sign({ userId: user.id, sessionId: challenge.id }, CHALLENGE_TTL_SECONDS);
    return { mfaToken, method, methods: await methodsOf(user) };
  }

  /** The pending challenge named by the mfaToken, else the open step-up of the caller's launch session. */
  async function pendingChallenge(mfaToken: string | undefined, actor: Actor | null): Promise<{ challenge: MfaChallengeRow; user: UserRow }> {
    let challenge: MfaChallengeRow | undefined;
    if (mfaToken) {
      const claims = await mfaTokens.verify(mfaToken);
      if (!claims) throw challengeOver();
      challenge = await findChallenge(db, claims.sessionId);
      if (challenge && challenge.userId !== claims.userId) challenge = undefined;
    } else if (actor?.launchScope) {
      challenge = await findOpenLaunchChallenge(db, actor.sessionId);
    } else {
      throw new BadRequestError('Invalid body.mfaToken: is required', 'VALIDATION_FAILED', { field: 'body.mfaToken' });
    }
    if (!challenge || challenge.consumedAt || challenge.expiresAt <= new Date()) throw challengeOver();
    const user = await findUserById(db, challenge.userId);
    if (!user || user.status === 'inactive' || user.status === 'deleted') throw challengeOver();
    return { challenge, user };
  }

  async function checkCode(challenge: MfaChallengeRow, user: UserRow, method: MfaMethod, code: string): Promise<void> {
    if (method === 'totp') {
      if (!user.totpSecretSealed) throw new BadRequestError('No authenticator app is set up for this account', 'METHOD_UNAVAILABLE');
      const step = matchTotp(secrets.decrypt(user.totpSecretSealed), code.trim());
      // A code already accepted once (same or earlier step) is refused: replay protection.
      if (step === null || !(await claimTotpStep(db, user.id, step))) throw invalidCode();
      return;
    }
    if (method === 'backup') {
      if (!(await consumeBackupCode(db, user.id, hashBackupCode(code)))) throw invalidCode();
      return;
    }
    if (!challenge.codeHash || !challenge.codeExpiresAt) throw invalidCode();
    if (!safeEqual(hashToken(code.trim()), challenge.codeHash)) throw invalidCode();
    if (challenge.codeExpiresAt <= new Date()) throw new BadRequestError('This code has expired; ask for a new one', 'CODE_EXPIRED');
  }

  async function complete(challenge: MfaChallengeRow, user: UserRow, client: ClientInfo): Promise<SignedIn> {
    if (challenge.purpose === 'signin') return auth.openSession(user, client);
    // A stepped-up launch session becomes a full session in the twin it was opened for.
    if (challenge.sessionId) {
      await revokeSession(db, challenge.sessionId);
      await deps.cache.invalidate({ sessionIds: [challenge.sessionId] });
    }
    let current = user;
    if (challenge.twinId && challenge.twinId !== user.currentTwinId && (await findMembership(db, user.id, challenge.twinId))) {
      current = (await updateUser(db, user.id, { currentTwinId: challenge.twinId })) ?? user;
    }
    return auth.openSession(current, client);
  }

  /** The person proved the first factor (password, or a provider's sign-in): a session, or the second factor. */
  async function afterFirstFactor(user: UserRow, client: ClientInfo): Promise<SignedIn | MfaRequired> {
    if (!user.mfaEnabled) return auth.openSession(user, client);
    const opened = await openChallenge(user, { purpose: 'signin' });
    return { success: true, mfaRequired: true, mfaToken: opened.mfaToken, mfaMethod: opened.method, methods: opened.methods };
  }

  return {
    async signIn(email: string, password: string, client: ClientInfo): Promise<SignedIn | MfaRequired> {
      const keys = { account: email.toLowerCase(), ip: client.ip };
      const user = await throttled(throttle, keys, () => auth.checkCredentials(email, password), isWrongPassword);
      return afterFirstFactor(user, client);
    },

    afterFirstFactor,

    async verify(
      input: { mfaToken?: string; code: string; method?: MfaMethod },
      actor: Actor | null,
      client: ClientInfo,
    ): Promise<SignedIn> {
      const { challenge, user } = await pendingChallenge(input.mfaToken, actor);
      const method = input.method ?? challenge.method;
      const keys = { account: user.email, ip: client.ip };
      try {
        await throttled(throttle, keys, () => checkCode(challenge, user, method, input.code), isWrongCode);
      } catch (error) {
        if (isWrongCode(error) && (await addChallengeAttempt(db, challenge.id)) >= throttle.limits.codeAttempts) {
          await consumeChallenge(db, challenge.id);
        }
        throw error;
      }
      if (!(await consumeChallenge(db, challenge.id))) throw challengeOver();
      return complete(challenge, user, client);
    },

    async resend(mfaToken: string | undefined, actor: Actor | null): Promise<void> {
      const { challenge, user } = await pendingChallenge(mfaToken, actor);
      await sendCode(challenge, user);
    },

    /** POST /api/user/launch-scope/challenge: mails a code that turns this launch session into a full one. */
    async startLaunchChallenge(actor: Actor): Promise<{ mfaToken: string }> {
      if (!actor.launchScope) throw new BadRequestError('This session is not restricted; nothing to confirm', 'NOT_LAUNCH_SESSION');
      const user = await findUserById(db, actor.userId);
      if (!user) throw challengeOver();
      const opened = await openChallenge(user, { purpose: 'launch', sessionId: actor.sessionId, twinId: actor.launchScope.twinId });
      return { mfaToken: opened.mfaToken };
    },
  };
}

export type SignInService = ReturnType<typeof createSignInService>;
