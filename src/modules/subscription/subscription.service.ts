// The subscription connection of the caller's current twin: start a device sign-in, poll it (one
// provider request per interval, whoever polls), read the status, disconnect. Administrators of the
// twin only. Each failure is an error with its contract code and a reason in words; the provider's or
// the database's detail goes to the log only, never a token.
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Executor } from '../../platform/db/client.js';
import { sqlStateOf } from '../../platform/db/errors.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError } from '../../platform/http/errors.js';
import { INSTITUTION_NOT_FOUND, requireAccess, SUBSCRIPTION_NOT_ADMIN } from '../access/access.js';
import { findTwinById } from '../twins/twins.repo.js';
import { ProviderError, type SubscriptionProvider } from './subscription.provider.js';
import { claimPoll, completeSignIn, deleteConnection, dropPending, findConnection, savePending, slowDown } from './subscription.repo.js';
import type { SubscriptionConnectionRow } from './subscription.tables.js';
import { sealTokens, type SubscriptionLog, type TokenKeeper } from './subscription.tokens.js';

export const SUBSCRIPTION_MESSAGES = {
  noTwin: INSTITUTION_NOT_FOUND,
  notAdmin: SUBSCRIPTION_NOT_ADMIN,
  notConfigured: 'Connecting a subscription is not available on this deployment',
  refused: 'The subscription provider does not allow signing in from a device for this service',
  startFailed: 'The subscription provider could not start a sign-in; try again later',
  noPending: 'No subscription sign-in is in progress; start one first',
  expired: 'The sign-in code expired; start a new sign-in',
  declined: 'The sign-in was declined at the subscription provider',
  pollFailed: 'The sign-in could not be checked with the subscription provider; try again',
  statusFailed: 'The subscription connection could not be read; try again',
  disconnectFailed: 'The subscription could not be disconnected; try again',
} as const;

export class SubscriptionError extends AppError {
  constructor(status: number, code: string, message: string) {
    super(status, message, code);
  }
}

export interface StartAnswer {
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  expiresAt: string;
  interval: number;
}

export interface SubscriptionServiceDeps {
  db: Executor;
  secrets: SecretBox;
  /** Unset: the deployment has no subscription configured (start answers 503). */
  provider?: SubscriptionProvider;
  keeper?: TokenKeeper;
  log: SubscriptionLog;
  now?: () => number;
}

export function createSubscriptionService(deps: SubscriptionServiceDeps) {
  const { db, secrets, provider, keeper, log } = deps;
  const now = deps.now ?? Date.now;

  /** The caller's current twin, which the caller must administer: 404 without one, 403 otherwise. */
  async function adminTwin(actor: Actor): Promise<string> {
    const twin = actor.twinId ? await findTwinById(db, actor.twinId) : undefined;
    await requireAccess(db, actor, 'subscription.manage', { twin });
    return twin!.id;
  }

  /** Runs a database step; a failure becomes the route's coded 500 (or 502), its cause logged without values. */
  async function guarded<T>(step: () => Promise<T>, failure: SubscriptionError, twinId: string, what: string): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof AppError) throw error;
      log.warn({ twinId, database: databaseDetail(error) }, what);
      throw failure;
    }
  }

  /** Usable now: turns would answer through it (none are, on a deployment whose subscription was unconfigured). */
  async function connected(twinId: string): Promise<boolean> {
    const row = await findConnection(db, twinId);
    return row && keeper ? (await keeper.accessTokenOf(row)) !== null : false;
  }

  async function revokeAtProvider(twinId: string, row: SubscriptionConnectionRow): Promise<void> {
    const tokens = [
      [row.refreshTokenSealed, 'refresh_token'],
      [row.accessTokenSealed, 'access_token'],
    ] as const;
    for (const [sealed, hint] of tokens) {
      if (!sealed) continue;
      try {
        if (!(await provider!.revoke(secrets.decrypt(sealed), hint))) return;
      } catch (error) {
        const detail = error instanceof ProviderError ? error.detail : { message: String(error) };
        log.warn({ twinId, provider: detail, token: hint }, 'subscription token could not be revoked at the provider (disconnected here all the same)');
      }
    }
  }

  return {
    async start(actor: Actor): Promise<StartAnswer> {
      const twinId = await adminTwin(actor);
      if (!provider) throw new SubscriptionError(503, 'DEVICE_AUTH_DISABLED', SUBSCRIPTION_MESSAGES.notConfigured);
      let authorization;
      try {
        authorization = await provider.startDeviceAuthorization();
      } catch (error) {
        const detail = error instanceof ProviderError ? error.detail : { message: String(error) };
        log.warn({ twinId, provider: detail }, 'subscription device authorization failed');
        if (error instanceof ProviderError && error.kind !== 'unreachable') {
          throw new SubscriptionError(503, 'DEVICE_AUTH_DISABLED', SUBSCRIPTION_MESSAGES.refused);
        }
        throw new SubscriptionError(502, 'START_FAILED', SUBSCRIPTION_MESSAGES.startFailed);
      }
      const started = now();
      const expiresAt = new Date(started + authorization.expiresInSeconds * 1000);
      await savePending(db, {
        twinId,
        deviceCodeSealed: secrets.encrypt(authorization.deviceCode),
        expiresAt,
        intervalSeconds: authorization.intervalSeconds,
        startedBy: actor.userId,
        now: new Date(started),
      });
      return {
        userCode: authorization.userCode,
        verificationUri: authorization.verificationUri,
        ...(authorization.verificationUriComplete ? { verificationUriComplete: authorization.verificationUriComplete } : {}),
        expiresAt: expiresAt.toISOString(),
        interval: authorization.intervalSeconds,
      };
    },

    async poll(actor: Actor): Promise<{ connected: boolean; pending: boolean }> {
      const twinId = await adminTwin(actor);
      const pollFailed = new SubscriptionError(502, 'POLL_FAILED', SUBSCRIPTION_MESSAGES.pollFailed);
      const stored = <T>(step: () => Promise<T>) => guarded(step, pollFailed, twinId, 'subscription poll: the database failed');
      const stillPending = async () => ({ connected: await stored(() => connected(twinId)), pending: true });
      const at = new Date(now());
      const claimed = await stored(() => claimPoll(db, twinId, at));
      if (!claimed) {
        // Nothing to ask the provider now: none pending, expired, or its interval not over yet.
        const row = await stored(() => findConnection(db, twinId));
        if (!row?.pendingDeviceCodeSealed) throw new SubscriptionError(400, 'NO_PENDING', SUBSCRIPTION_MESSAGES.noPending);
        if (row.pendingExpiresAt && row.pendingExpiresAt.getTime() <= at.getTime()) {
          await stored(() => dropPending(db, twinId, row.pendingDeviceCodeSealed!));
          throw new SubscriptionError(410, 'EXPIRED', SUBSCRIPTION_MESSAGES.expired);
        }
        return stillPending();
      }
      const deviceCodeSealed = claimed.pendingDeviceCodeSealed!;
      if (!provider) throw pollFailed;
      let tokens;
      try {
        tokens = await provider.exchangeDeviceCode(secrets.decrypt(deviceCodeSealed));
      } catch (error) {
        const detail = error instanceof ProviderError ? error.detail : { message: String(error) };
        switch (error instanceof ProviderError ? error.oauthError : undefined) {
          case 'authorization_pending':
            return stillPending();
          case 'slow_down':
            await stored(() => slowDown(db, twinId, deviceCodeSealed, new Date(now())));
            return stillPending();
          case 'access_denied':
            log.warn({ twinId, provider: detail }, 'subscription sign-in declined');
            await stored(() => dropPending(db, twinId, deviceCodeSealed));
            throw new SubscriptionError(400, 'DEVICE_AUTH_FAILED', SUBSCRIPTION_MESSAGES.declined);
          case 'expired_token':
            await stored(() => dropPending(db, twinId, deviceCodeSealed));
            throw new SubscriptionError(410, 'EXPIRED', SUBSCRIPTION_MESSAGES.expired);
          default:
            log.warn({ twinId, provider: detail }, 'subscription poll failed');
            throw pollFailed;
        }
      }
      const sealed = sealTokens(secrets, tokens, now());
      const done = await stored(() => completeSignIn(db, twinId, deviceCodeSealed, { ...sealed, connectedBy: claimed.pendingStartedBy, now: new Date(now()) }));
      if (done) return { connected: true, pending: false };
      // Replaced by a newer start, or disconnected, while the provider answered: the row says what counts now.
      const row = await stored(() => findConnection(db, twinId));
      return { connected: await stored(() => connected(twinId)), pending: Boolean(row?.pendingDeviceCodeSealed) };
    },

    async status(actor: Actor): Promise<{ connected: boolean }> {
      const twinId = await adminTwin(actor);
      const failed = new SubscriptionError(500, 'STATUS_FAILED', SUBSCRIPTION_MESSAGES.statusFailed);
      return { connected: await guarded(() => connected(twinId), failed, twinId, 'subscription status could not be read') };
    },

    async disconnect(actor: Actor): Promise<{ connected: false }> {
      const twinId = await adminTwin(actor);
      const failed = new SubscriptionError(500, 'DISCONNECT_FAILED', SUBSCRIPTION_MESSAGES.disconnectFailed);
      const dropped = await guarded(() => deleteConnection(db, twinId), failed, twinId, 'subscription could not be disconnected');
      // Best effort, after the answer's effect is certain: the provider forgets the tokens too.
      if (dropped && provider) void revokeAtProvider(twinId, dropped);
      return { connected: false };
    },
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;

/** What the log may say of a database failure: its SQLSTATE and the server's message, never the statement's values. */
function databaseDetail(error: unknown): Record<string, unknown> {
  const cause = (error as { cause?: unknown })?.cause;
  const source = cause instanceof Error ? cause : error;
  return { code: sqlStateOf(error), message: source instanceof Error ? source.message : String(source) };
}
