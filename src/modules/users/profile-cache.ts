// The refreshed profile, kept per person as the JSON it is sent as (the text, ready to write):
// every open tab polls it, and reading it from the database on each poll costs more than everything
// else the route does. A row cache (platform/db/row-cache.ts) keeps it true: a change to the person or
// their memberships drops their entry, a change to a twin or an assistant drops the profiles showing
// it, in every process.
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import { createRowCache } from '../../platform/db/row-cache.js';

export const ENTRY_TTL_MS = 60_000;

/** What a cached profile depends on, besides the person's own rows. */
export interface ProfileDependencies {
  twinId: string | null;
  favoriteIds: readonly string[];
}

type CachedProfile = { body: string } & ProfileDependencies;

export interface ProfileCache {
  /** The cached JSON, or the one `fill` makes (kept when no change overtook it). */
  get(userId: string, fill: () => Promise<CachedProfile>): Promise<string>;
  /** The cached JSON when `get` would serve it without a fill, at once (no promise); else undefined. */
  peek(userId: string): string | undefined;
  readonly size: number;
}

export function createProfileCache(feed: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>, now: () => number = Date.now): ProfileCache {
  const cache = createRowCache<CachedProfile>(feed, {
    keyTables: ['users', 'memberships'],
    dependsOn: {
      institutions: (profile) => [profile.twinId],
      assistants: (profile) => profile.favoriteIds,
      // Whether the twin's subscription is connected (notices keyed by the twin).
      subscription_connections: (profile) => [profile.twinId],
    },
    // A notice of any other table forgets everything: safer than guessing what it touched.
    forgetOnOtherTables: true,
    ttlMs: ENTRY_TTL_MS,
    now,
  });
  return {
    get size() {
      return cache.size;
    },
    peek(userId) {
      return cache.peek(userId)?.body;
    },
    async get(userId, fill) {
      // A copy of the favorites: the caller's list may change after the fill.
      const profile = await cache.get(userId, async () => {
        const filled = await fill();
        return { ...filled, favoriteIds: [...filled.favoriteIds] };
      });
      return profile.body;
    },
  };
}
