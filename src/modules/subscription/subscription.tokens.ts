// The connection's access token, ready to use: read from the twin's row on each call (so a disconnect
// on any process counts for the next call everywhere), and refreshed first when it expires within the
// margin. A refresh the provider refuses marks the connection not usable; one that cannot reach the
// provider keeps the current token while it is still valid. Tokens are never logged.
import { FALLBACK_MODEL_ID } from '../../ai/registry.js';
import type { SubscriptionConfig } from '../../config.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Executor } from '../../platform/db/client.js';
import { ProviderError, type SubscriptionProvider, type TokenSet } from './subscription.provider.js';
import { findConnection, markRefreshFailed, saveRefreshed } from './subscription.repo.js';
import type { SubscriptionConnectionRow } from './subscription.tables.js';

/** An access token expiring sooner than this is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 60_000;
/** After a refresh that could not reach the provider, turns use the still-valid token this long before trying again. */
export const UNREACHABLE_BACKOFF_MS = 15_000;

export interface SubscriptionLog {
  warn(details: object, message: string): void;
}

export interface TokenKeeperDeps {
  db: Executor;
  secrets: SecretBox;
  provider: SubscriptionProvider;
  log: SubscriptionLog;
  now?: () => number;
}

/** What a turn of a connected twin calls instead of the deployment's endpoint. */
export interface SubscriptionEndpoint {
  baseUrl: string;
  apiKey: string;
  /** The model used when the assistant names none. */
  model: string;
}

export interface TokenKeeper {
  /** The twin's usable access token, refreshed if due; null when not connected or not usable. */
  accessToken(twinId: string): Promise<string | null>;
  /** The same for a row already read. */
  accessTokenOf(row: SubscriptionConnectionRow): Promise<string | null>;
}

export function sealTokens(secrets: Pick<SecretBox, 'encrypt'>, tokens: TokenSet, now: number) {
  return {
    accessTokenSealed: secrets.encrypt(tokens.accessToken),
    refreshTokenSealed: tokens.refreshToken ? secrets.encrypt(tokens.refreshToken) : null,
    tokenExpiresAt: tokens.expiresInSeconds === undefined ? null : new Date(now + tokens.expiresInSeconds * 1000),
    accountSealed: tokens.account ? secrets.encrypt(tokens.account) : null,
  };
}

export function createTokenKeeper(deps: TokenKeeperDeps): TokenKeeper {
  const { db, secrets, provider, log } = deps;
  const now = deps.now ?? Date.now;
  /** One refresh per twin and token version at a time in this process. */
  const refreshing = new Map<string, Promise<string | null>>();
  /** When a twin's last refresh could not reach the provider (so turns do not each wait for it again). */
  const unreachableAt = new Map<string, number>();

  async function accessTokenOf(row: SubscriptionConnectionRow, mayRefresh = true): Promise<string | null> {
    if (!row.accessTokenSealed || row.refreshFailedAt) return null;
    const expiresAt = row.tokenExpiresAt?.getTime();
    if (expiresAt === undefined || expiresAt - now() > REFRESH_MARGIN_MS) return secrets.decrypt(row.accessTokenSealed);
    const backingOff = now() - (unreachableAt.get(row.twinId) ?? -Infinity) < UNREACHABLE_BACKOFF_MS;
    if (!row.refreshTokenSealed || !mayRefresh || (backingOff && expiresAt > now())) return expiresAt > now() ? secrets.decrypt(row.accessTokenSealed) : null;
    const key = `${row.twinId}:${row.tokenVersion}`;
    let flight = refreshing.get(key);
    if (!flight) {
      flight = refresh(row, expiresAt).finally(() => refreshing.delete(key));
      refreshing.set(key, flight);
    }
    return flight;
  }

  /** After losing a race: the tokens another process stored, if it did. */
  async function theirs(row: SubscriptionConnectionRow): Promise<string | null | undefined> {
    const again = await findConnection(db, row.twinId);
    if (!again) return null;
    return again.tokenVersion !== row.tokenVersion ? accessTokenOf(again, false) : undefined;
  }

  async function refresh(row: SubscriptionConnectionRow, expiresAt: number): Promise<string | null> {
    const stillValid = () => (expiresAt > now() ? secrets.decrypt(row.accessTokenSealed!) : null);
    let tokens: TokenSet;
    try {
      tokens = await provider.refresh(secrets.decrypt(row.refreshTokenSealed!));
    } catch (error) {
      const detail = error instanceof ProviderError ? error.detail : { message: String(error) };
      if (error instanceof ProviderError && error.kind === 'refused') {
        // A rotated refresh token another process used first is refused too: look before giving up.
        const other = await theirs(row);
        if (other !== undefined) return other;
        await markRefreshFailed(db, row.twinId, row.tokenVersion, new Date(now()));
        log.warn({ twinId: row.twinId, provider: detail }, 'subscription refresh refused; the connection is not usable until connected again');
        return null;
      }
      unreachableAt.set(row.twinId, now());
      log.warn({ twinId: row.twinId, provider: detail }, 'subscription refresh failed; the current token is used while it lasts');
      return stillValid();
    }
    unreachableAt.delete(row.twinId);
    const sealed = sealTokens(secrets, tokens, now());
    const saved = await saveRefreshed(db, row.twinId, row.tokenVersion, {
      accessTokenSealed: sealed.accessTokenSealed,
      // A provider that does not rotate refresh tokens sends none back: the one we have stays good.
      refreshTokenSealed: sealed.refreshTokenSealed ?? row.refreshTokenSealed,
      tokenExpiresAt: sealed.tokenExpiresAt,
      ...(sealed.accountSealed ? { accountSealed: sealed.accountSealed } : {}),
    });
    if (saved) return tokens.accessToken;
    // Disconnected or refreshed elsewhere meanwhile.
    return (await theirs(row)) ?? null;
  }

  return {
    accessTokenOf: (row) => accessTokenOf(row),
    async accessToken(twinId) {
      const row = await findConnection(db, twinId);
      return row ? accessTokenOf(row) : null;
    },
  };
}

/** The lookup a turn uses: the subscription's API with the twin's token, or null to use the deployment's endpoint. */
export function subscriptionModelLookup(keeper: TokenKeeper, config: SubscriptionConfig) {
  return async function subscriptionModelFor(twinId: string): Promise<SubscriptionEndpoint | null> {
    const apiKey = await keeper.accessToken(twinId);
    return apiKey ? { baseUrl: config.apiBase, apiKey, model: config.model ?? FALLBACK_MODEL_ID } : null;
  };
}
