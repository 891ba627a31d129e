// Where an OpenID Connect provider comes from (the deployment's configuration, or a twin's SSO
// provider row) and its discovered configuration, cached per process. Plain-http issuers are allowed
// only on the loopback interface (development and tests); anything else must be https.
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../config.js';
import type { Executor } from '../../platform/db/client.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
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
  if (fromConfig) return { key, ...fromConfig, twinId: null };
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
  };
}

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const discovered = new Map<string, { at: number; config: Promise<client.Configuration> }>();

/** The provider's discovered configuration; a failed discovery is not cached. */
export function providerConfiguration(provider: ResolvedProvider): Promise<client.Configuration> {
  const cacheKey = JSON.stringify([provider.issuer, provider.clientId, provider.clientSecret ?? '']);
  const hit = discovered.get(cacheKey);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
  if (!isAcceptableIssuer(provider.issuer)) return Promise.reject(new Error(`issuer must be https: ${provider.issuer}`));
  const insecure = new URL(provider.issuer).protocol === 'http:';
  const config = client.discovery(
    new URL(provider.issuer),
    provider.clientId,
    provider.clientSecret,
    provider.clientSecret ? undefined : client.None(),
    { execute: insecure ? [client.allowInsecureRequests] : [], timeout: 10 },
  );
  discovered.set(cacheKey, { at: Date.now(), config });
  config.catch(() => discovered.delete(cacheKey));
  return config;
}
