// The subscription's authorization server, through openid-client (a certified client): discovery,
// the device authorization request, one device-code token request per poll (the service spaces them
// by `interval`, raised on slow_down), and the refresh grant. Every outcome is sorted here into what
// the service needs, with a detail for the log that never carries a token.
import * as client from 'openid-client';
import type { SubscriptionConfig } from '../../config.js';

const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  expiresInSeconds: number;
  intervalSeconds: number;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** Seconds the access token lives, when the provider says. */
  expiresInSeconds?: number;
  /** The provider's account (the id_token's subject), when it sent one. */
  account?: string;
}

/** Why a call to the provider did not give what was asked; `detail` is for the log only. */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'unsupported' | 'refused' | 'unreachable',
    /** The OAuth error code when the provider answered with one (access_denied, slow_down, ...). */
    readonly oauthError: string | undefined,
    readonly detail: Record<string, unknown>,
  ) {
    super(oauthError ?? kind);
    this.name = 'ProviderError';
  }
}

export interface SubscriptionProvider {
  startDeviceAuthorization(): Promise<DeviceAuthorization>;
  /** One token request for the device code: tokens, or a ProviderError (authorization_pending, slow_down, ...). */
  exchangeDeviceCode(deviceCode: string): Promise<TokenSet>;
  refresh(refreshToken: string): Promise<TokenSet>;
  /** Revokes a token at the provider, when it has a revocation endpoint (false when it has none). */
  revoke(token: string, hint: 'access_token' | 'refresh_token'): Promise<boolean>;
}

export function createSubscriptionProvider(config: SubscriptionConfig): SubscriptionProvider {
  let discovered: { at: number; configuration: Promise<client.Configuration> } | undefined;

  function configuration(): Promise<client.Configuration> {
    if (discovered && Date.now() - discovered.at < DISCOVERY_TTL_MS) return discovered.configuration;
    const url = new URL(config.issuer);
    // Plain http only on loopback (development and tests); tokens never travel in clear elsewhere.
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
      return Promise.reject(new ProviderError('unsupported', undefined, { reason: 'issuer must be https', issuer: config.issuer }));
    }
    const pending = client
      .discovery(url, config.clientId, config.clientSecret, config.clientSecret ? undefined : client.None(), {
        execute: url.protocol === 'http:' ? [client.allowInsecureRequests] : [],
        timeout: 10,
      })
      .catch((error: unknown) => {
        throw sorted(error);
      });
    discovered = { at: Date.now(), configuration: pending };
    pending.catch(() => {
      if (discovered?.configuration === pending) discovered = undefined;
    });
    return pending;
  }

  return {
    async startDeviceAuthorization() {
      const server = await configuration();
      if (!server.serverMetadata().device_authorization_endpoint) {
        throw new ProviderError('unsupported', undefined, { reason: 'the provider has no device_authorization_endpoint' });
      }
      try {
        const response = await client.initiateDeviceAuthorization(server, { scope: config.scope });
        return {
          deviceCode: response.device_code,
          userCode: response.user_code,
          verificationUri: response.verification_uri,
          verificationUriComplete: response.verification_uri_complete,
          expiresInSeconds: response.expires_in,
          intervalSeconds: response.interval ?? 5,
        };
      } catch (error) {
        throw sorted(error);
      }
    },

    async exchangeDeviceCode(deviceCode) {
      const server = await configuration();
      try {
        return tokenSet(await client.genericGrantRequest(server, DEVICE_CODE_GRANT, { device_code: deviceCode }));
      } catch (error) {
        throw sorted(error);
      }
    },

    async refresh(refreshToken) {
      const server = await configuration();
      try {
        return tokenSet(await client.refreshTokenGrant(server, refreshToken));
      } catch (error) {
        throw sorted(error);
      }
    },

    async revoke(token, hint) {
      const server = await configuration();
      if (!server.serverMetadata().revocation_endpoint) return false;
      try {
        await client.tokenRevocation(server, token, { token_type_hint: hint });
        return true;
      } catch (error) {
        throw sorted(error);
      }
    },
  };
}

function tokenSet(response: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): TokenSet {
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token,
    expiresInSeconds: response.expiresIn(),
    account: response.claims()?.sub,
  };
}

/**
 * An OAuth error answer is the provider refusing (its code kept); anything else (no answer, a 5xx, a
 * malformed body) is the provider unreachable. Only the error's code, description, status and message
 * are kept for the log: never a request or response body that could hold a token.
 */
function sorted(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof client.ResponseBodyError) {
    const detail = { error: error.error, description: error.error_description, status: error.status };
    return new ProviderError(error.status >= 500 ? 'unreachable' : 'refused', error.error, detail);
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown })?.code;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  return new ProviderError('unreachable', undefined, { message, code, cause: cause?.code ?? cause?.message });
}
