// Rows a process reads on every request and that rarely change (a twin, the standard assistant), kept in
// memory and kept true by row change notices (change-feed.ts): a change to a cached row drops it in every
// process; a fill that a change overtook is not kept; nothing is served while this process may have a
// change of its own still unheard (ChangeFeed.caughtUp), and an entry lives at most `ttlMs`.
import type { ChangeFeed } from './change-feed.js';

export interface RowCacheOptions<T> {
  /** The table whose notices (`<table>:<key>`) drop entries. */
  table: string;
  /** The key a notice of this row names (the trigger's argument, e.g. the id). */
  rowKey: (row: T) => string;
  /**
   * Whether entries are stored under the key their notices name (default true): then only a change of
   * that key overtakes a fill. Otherwise (an entry under a name, e.g. 'standard') any change of the
   * table does, since which row a fill will bring is not known until it is done.
   */
  keyedByRow?: boolean;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

export interface RowCache<T> {
  /** The cached row under `key`, or the one `fill` reads (kept when found and no change overtook it). */
  get(key: string, fill: () => Promise<T | undefined>): Promise<T | undefined>;
  readonly size: number;
}

interface Entry<T> {
  row: T;
  rowKey: string;
  storedAt: number;
}

export function createRowCache<T>(feed: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>, options: RowCacheOptions<T>): RowCache<T> {
  const { table, rowKey, keyedByRow = true, ttlMs = 60_000, maxEntries = 10_000, now = Date.now } = options;
  const entries = new Map<string, Entry<T>>();
  /** Fills under way, and whether a change overtook them. */
  const filling = new Set<{ key: string; overtaken: boolean }>();

  feed.subscribe((change) => {
    if (change.table !== table && change.table !== '*') return;
    if (change.table === '*') entries.clear();
    // Stored under the notice's key: one lookup (a pooling twin's row changes with every turn it pays for).
    else if (keyedByRow) entries.delete(change.key);
    else for (const [key, entry] of entries) if (entry.rowKey === change.key) entries.delete(key);
    for (const fill of filling) if (change.table === '*' || !keyedByRow || fill.key === change.key) fill.overtaken = true;
  });

  return {
    get size() {
      return entries.size;
    },
    async get(key, fill) {
      const entry = entries.get(key);
      if (entry && feed.caughtUp && now() - entry.storedAt < ttlMs) return entry.row;
      const mine = { key, overtaken: false };
      filling.add(mine);
      try {
        const row = await fill();
        if (row !== undefined && !mine.overtaken) {
          if (entries.size >= maxEntries && !entries.has(key)) entries.delete(entries.keys().next().value!);
          entries.set(key, { row, rowKey: rowKey(row), storedAt: now() });
        }
        return row;
      } finally {
        filling.delete(mine);
      }
    },
  };
}
