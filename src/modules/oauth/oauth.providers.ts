// Where an OpenID Connect provider comes from (the deployment's configuration, or a twin's SSO
// provider row) and its discovered configuration, cached per process. Plain-http issuers are allowed
// only on the loopback interface (development and tests); anything else must be https. A twin's
// provider is reached only through the outbound guard (discovery, token, JWKS, userinfo); the
// deployment's own providers are trusted. Whatever the issuer URL looks like, the discovered metadata
// must name that very issuer (openid-client skips the check for a URL containing /.well-known/).
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../config.js';
import type { Executor } from '../../platform/db/client.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Outbound } from '../../platform/net/outbound.js';
import { isObjectId } from '../../platform/ids/ids.js';
import { findSsoProvider } from './oauth.repo.js';

export interface ResolvedProvider {
  /** The path segment: a deployment provider's id, or a twin SSO provider's 24-hex id. */
  key: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** Set for a twin's own provider: its sign-ins open launch sessions in that twin (behaviour 16). */
  twinId: string | null;
  /** From the deployment's configuration (OIDC_PROVIDERS): reached directly; a twin's provider goes through the outbound guard. */
  trusted: boolean;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackUrl(value: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(value).hostname);
  } catch {
    return false;
  }
}

/** https anywhere, http only on loopback. */
export function isAcceptableIssuer(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(value));
  } catch {
    return false;
  }
}

export async function resolveProvider(
  db: Executor,
  secrets: SecretBox,
  configured: OidcProviderConfig[],
  key: string,
): Promise<ResolvedProvider | undefined> {
  const fromConfig = configured.find((provider) => provider.id === key);
  if (fromConfig) return { key, ...fromConfig, twinId: null, trusted: true };
  if (!isObjectId(key)) return undefined;
  const row = await findSsoProvider(db, key);
  if (!row) return undefined;
  return {
    key,
    name: row.name,
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecret: row.clientSecretSealed ? secrets.decrypt(row.clientSecretSealed) : undefined,
    twinId: row.twinId,
    trusted: false,
  };
}

/** The path every provider publishes its discovery document under: an issuer never contains it. */
export function isDiscoveryUrl(value: string): boolean {
  return URL.canParse(value) && new URL(value).pathname.includes('/.well-known/');
}

/** Issuers compare as URLs (as openid-client compares them): `https://idp.example` is `https://idp.example/`. */
export function sameIssuer(discovered: string, configured: string): boolean {
  return URL.canParse(discovered) && URL.canParse(configured) && new URL(discovered).href === new URL(configured).href;
}

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const discovered = new Map<string, { at: number; config: Promise<client.Configuration> }>();

/**
 * The provider's discovered configuration; a failed discovery is not cached. A twin's provider's every
 * request (discovery, token, JWKS, userinfo) goes through the outbound guard's fetch.
 */
export function providerConfiguration(provider: ResolvedProvider, outbound: Outbound): Promise<client.Configuration> {
  const cacheKey = JSON.stringify([provider.issuer, provider.clientId, provider.clientSecret ?? '', provider.trusted]);
  const hit = discovered.get(cacheKey);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
  if (!isAcceptableIssuer(provider.issuer)) return Promise.reject(new Error(`issuer must be https: ${provider.issuer}`));
  const config = discover(provider, provider.trusted ? undefined : outbound.fetch);
  discovered.set(cacheKey, { at: Date.now(), config });
  config.catch(() => discovered.delete(cacheKey));
  return config;
}

async function discover(provider: ResolvedProvider, guarded: Outbound['fetch'] | undefined): Promise<client.Configuration> {
  const insecure = new URL(provider.issuer).protocol === 'http:';
  const configuration = await client.discovery(
    new URL(provider.issuer),
    provider.clientId,
    provider.clientSecret,
    provider.clientSecret ? undefined : client.None(),
    {
      execute: insecure ? [client.allowInsecureRequests] : [],
      timeout: 10,
      // openid-client's body type (a Uint8Array of any buffer) is one fetch takes at run time.
      ...(guarded ? { [client.customFetch]: (url: string, options: client.CustomFetchOptions) => guarded(url, options as RequestInit) } : {}),
    },
  );
  const { issuer } = configuration.serverMetadata();
  if (!sameIssuer(issuer, provider.issuer)) {
    throw new Error(`The provider's discovered issuer (${issuer}) is not its configured issuer (${provider.issuer})`);
  }
  return configuration;
}
