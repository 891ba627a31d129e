// The platforms' public keys: one remote key set per JWKS URL, fetched through the outbound guard,
// kept 10 minutes, and fetched again for a key id it does not hold at most once every 5 seconds (a
// platform that rotated its key is heard at once; a stream of made-up key ids costs one fetch per 5 s).
// Each process keeps its own sets.
import { createRemoteJWKSet, customFetch } from 'jose';
import type { Outbound } from '../../platform/net/outbound.js';

export const KEY_REFETCH_COOLDOWN_MS = 5_000;
const KEY_CACHE_MAX_AGE_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 5_000;
/** Sets kept at most (the oldest forgotten first): one per registered JWKS URL in practice. */
const MAX_SETS = 500;

export type PlatformKeySet = ReturnType<typeof createRemoteJWKSet>;

export function createPlatformKeys(outbound: Outbound) {
  const sets = new Map<string, PlatformKeySet>();
  return {
    of(jwksUrl: string): PlatformKeySet {
      let set = sets.get(jwksUrl);
      if (!set) {
        set = createRemoteJWKSet(new URL(jwksUrl), {
          cooldownDuration: KEY_REFETCH_COOLDOWN_MS,
          cacheMaxAge: KEY_CACHE_MAX_AGE_MS,
          timeoutDuration: FETCH_TIMEOUT_MS,
          // No redirect is followed: the keys are where the administrator said.
          [customFetch]: (url, options) => outbound.fetch(url, { ...options, redirect: 'error' }),
        });
        if (sets.size >= MAX_SETS) sets.delete(sets.keys().next().value!);
        sets.set(jwksUrl, set);
      }
      return set;
    },
  };
}

export type PlatformKeys = ReturnType<typeof createPlatformKeys>;
