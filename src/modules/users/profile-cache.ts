// The refreshed profile, kept per person as the JSON it is sent as: every open tab polls it, and reading
// it from the database on each poll costs more than everything else the route does. Row change notices
// keep it true: a change to the person, their memberships, a twin or an assistant drops what it touches,
// in every process; a fill that a change overtook is not kept; nothing is served while this process may
// have a change of its own still unheard (ChangeFeed.caughtUp). An entry lives at most ENTRY_TTL_MS.
import type { ChangeFeed } from '../../platform/db/change-feed.js';

export const ENTRY_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/** What a cached profile depends on, besides the person's own rows. */
export interface ProfileDependencies {
  institutionId: string | null;
  favoriteIds: readonly string[];
}

interface Entry extends ProfileDependencies {
  json: string;
  storedAt: number;
}

export interface ProfileCache {
  /** The cached JSON, or the one `fill` makes (kept when no change overtook it). */
  get(userId: string, fill: () => Promise<{ json: string } & ProfileDependencies>): Promise<string>;
  readonly size: number;
}

export function createProfileCache(feed: ChangeFeed, now: () => number = Date.now): ProfileCache {
  const entries = new Map<string, Entry>();
  /** Fills under way, and whether a change overtook them. */
  const filling = new Set<{ userId: string; overtaken: boolean }>();

  const overtake = (userId?: string) => {
    for (const fill of filling) if (!userId || fill.userId === userId) fill.overtaken = true;
  };
  const dropWhere = (test: (entry: Entry) => boolean) => {
    for (const [id, entry] of entries) if (test(entry)) entries.delete(id);
  };

  feed.subscribe(({ table, key }) => {
    switch (table) {
      case 'users':
      case 'memberships':
        entries.delete(key);
        overtake(key);
        return;
      case 'institutions':
        dropWhere((entry) => entry.institutionId === key);
        overtake();
        return;
      case 'assistants':
        dropWhere((entry) => entry.favoriteIds.includes(key));
        overtake();
        return;
      default:
        entries.clear();
        overtake();
    }
  });

  return {
    get size() {
      return entries.size;
    },
    async get(userId, fill) {
      const entry = entries.get(userId);
      if (entry && feed.caughtUp && now() - entry.storedAt < ENTRY_TTL_MS) return entry.json;
      const mine = { userId, overtaken: false };
      filling.add(mine);
      try {
        const filled = await fill();
        if (!mine.overtaken) {
          if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
          entries.set(userId, { ...filled, favoriteIds: [...filled.favoriteIds], storedAt: now() });
        }
        return filled.json;
      } finally {
        filling.delete(mine);
      }
    },
  };
}
