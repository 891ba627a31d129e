// Rows a process reads on every request and that rarely change (a twin, the standard assistant, a
// person's refreshed profile), kept in memory and kept true by row change notices (change-feed.ts): a
// change to a row an entry depends on drops it in every process; a fill that a change overtook is not
// kept; nothing is served while this process may have a change of its own still unheard
// (ChangeFeed.caughtUp), and an entry lives at most `ttlMs`. Requests that miss the same key while its
// fill runs share that fill: when entries expire under load (a hundred requests in flight for twenty
// people), each key costs one read, not one per request arriving before the first read is back.
import type { ChangeFeed } from './change-feed.js';

export interface RowCacheOptions<T> {
  /**
   * Tables whose notices (`<table>:<key>`) name the entry's own key (a twin under its id; a profile under
   * its person's id, for `users` and `memberships` alike): a notice drops that entry, and overtakes only
   * a fill of that key.
   */
  keyTables?: readonly string[];
  /**
   * Tables an entry depends on through the rows it names (the assistant stored under 'standard'; a
   * profile's twin and favorite assistants): a notice drops the entries naming its key, and overtakes
   * every fill under way, since which rows a fill brings is not known until it is done.
   */
  dependsOn?: Readonly<Record<string, (row: T) => readonly (string | null)[]>>;
  /** A notice of any other table forgets everything (an entry built from more than the tables named); default: ignored. */
  forgetOnOtherTables?: boolean;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

export interface RowCache<T> {
  /** The cached row under `key`, or the one `fill` reads (kept when found and no change overtook it). */
  get<R extends T | undefined>(key: string, fill: () => Promise<R>): Promise<T | R>;
  /** The cached row under `key` when `get` would serve it without a fill, at once; else undefined. */
  peek(key: string): T | undefined;
  readonly size: number;
}

interface Fill<T> {
  key: string;
  overtaken: boolean;
  row: Promise<T | undefined>;
}

interface Entry<T> {
  row: T;
  storedAt: number;
}

export function createRowCache<T>(feed: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>, options: RowCacheOptions<T>): RowCache<T> {
  const { keyTables = [], dependsOn = {}, forgetOnOtherTables = false, ttlMs = 60_000, maxEntries = 10_000, now = Date.now } = options;
  const entries = new Map<string, Entry<T>>();
  /** Fills under way, and whether a change overtook them. */
  const filling = new Set<Fill<T>>();
  /** The fill a request missing its key may share: one not overtaken (else it may bring the row as it was). */
  const shared = new Map<string, Fill<T>>();
  const overtake = (key?: string) => {
    for (const fill of filling) {
      if (key !== undefined && fill.key !== key) continue;
      fill.overtaken = true;
      if (shared.get(fill.key) === fill) shared.delete(fill.key);
    }
  };

  feed.subscribe(({ table, key }) => {
    if (keyTables.includes(table)) {
      // One lookup: a pooling twin's row changes with every turn it pays for.
      entries.delete(key);
      return overtake(key);
    }
    const named = Object.hasOwn(dependsOn, table) ? dependsOn[table] : undefined;
    if (named) {
      for (const [entryKey, entry] of entries) if (named(entry.row).includes(key)) entries.delete(entryKey);
      return overtake();
    }
    if (table === '*' || forgetOnOtherTables) {
      entries.clear();
      overtake();
    }
  });

  return {
    get size() {
      return entries.size;
    },
    peek(key) {
      const entry = entries.get(key);
      return entry && feed.caughtUp && now() - entry.storedAt < ttlMs ? entry.row : undefined;
    },
    get(key, fill) {
      const cached = this.peek(key);
      if (cached !== undefined) return Promise.resolve(cached);
      // Only while caught up: a fill started before this process heard its own change may read the old row.
      const running = feed.caughtUp ? shared.get(key) : undefined;
      if (running) return running.row as Promise<T>;
      const mine: Fill<T> = { key, overtaken: false, row: Promise.resolve(undefined) };
      filling.add(mine);
      mine.row = (async () => {
        try {
          const row = await fill();
          if (row !== undefined && !mine.overtaken) {
            if (entries.size >= maxEntries && !entries.has(key)) entries.delete(entries.keys().next().value!);
            entries.set(key, { row, storedAt: now() });
          }
          return row;
        } finally {
          filling.delete(mine);
          if (shared.get(key) === mine) shared.delete(key);
        }
      })();
      if (feed.caughtUp) shared.set(key, mine);
      return mine.row as Promise<T>;
    },
  };
}
