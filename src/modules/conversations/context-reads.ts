// What every turn of a person asks before it builds its context: whether they have a file search can
// see (a turn without one skips retrieval), and the memories it may recall. Both change only when a
// file or a memory of the twin changes: cached per person and kept true by row change notices
// (migration 0018: files and memory_parameters under the twin's id), so a turn runs two statements
// less. The person's memory switch is not cached (their row changes with every turn they pay for): the
// cache holds their personal rows too, and only when they have some is the switch read, in a one-column
// statement. Without a change feed, straight from the database. Cached rows are shared between turns:
// read them, never change them.
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Executor } from '../../platform/db/client.js';
import { createRowCache } from '../../platform/db/row-cache.js';
import { searchableFilesOf } from '../files/files.repo.js';
import { listRecallable } from '../memory/memory.repo.js';
import { findTurnPerson } from '../users/users.repo.js';
import type { MemoryRow } from '../memory/memory.tables.js';

export interface SearchableFiles {
  own: boolean;
  shared: boolean;
}

export interface ContextReads {
  searchableFiles(twinId: string, userId: string): Promise<SearchableFiles>;
  /** The rows recall chooses from (memory/recall.ts), the personal ones as the person's switch is set. */
  recallable(twinId: string, userId: string, limit: number): Promise<readonly MemoryRow[]>;
}

export function directContextReads(db: Executor): ContextReads {
  return {
    searchableFiles: (twinId, userId) => searchableFilesOf(db, twinId, userId),
    recallable: (twinId, userId, limit) => listRecallable(db, twinId, userId, 'as-set', limit),
  };
}

interface Cached<T> {
  twinId: string;
  userId: string;
  value: T;
}

/** Entries a process keeps of each kind: one per person asking (the oldest goes first). */
const MAX_PEOPLE = 5_000;

export function cachedContextReads(db: Executor, feed: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>): ContextReads {
  const files = createRowCache<Cached<SearchableFiles>>(feed, { dependsOn: { files: (entry) => [entry.twinId] }, maxEntries: MAX_PEOPLE });
  const memories = createRowCache<Cached<readonly MemoryRow[]>>(feed, { dependsOn: { memory_parameters: (entry) => [entry.twinId] }, maxEntries: MAX_PEOPLE });
  return {
    async searchableFiles(twinId, userId) {
      const entry = await files.get(`${twinId}:${userId}`, async () => ({ twinId, userId, value: await searchableFilesOf(db, twinId, userId) }));
      return entry.value;
    },
    async recallable(twinId, userId, limit) {
      const fill = async () => ({ twinId, userId, value: await listRecallable(db, twinId, userId, true, limit) });
      const rows = (await memories.get(`${twinId}:${userId}:${limit}`, fill)).value;
      if (rows.every((row) => row.shared)) return rows;
      if ((await findTurnPerson(db, userId))?.userMemoryEnabled) return rows;
      // Switch off: the shared rows. When the limit cut the list, personal rows took places shared
      // ones would have had: the database answers.
      return rows.length < limit ? rows.filter((row) => row.shared) : listRecallable(db, twinId, userId, false, limit);
    },
  };
}
