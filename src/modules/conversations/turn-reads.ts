// What every turn reads that rarely changes: the twin and the standard assistant (New Conversation).
// Served from row caches kept true by row change notices (platform/db/row-cache.ts) when the app has a
// change feed, so a turn starts with two statements less; straight from the database otherwise.
// Cached rows are shared between turns: read them, never change them.
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Executor } from '../../platform/db/client.js';
import { createRowCache } from '../../platform/db/row-cache.js';
import { standardAssistant } from '../assistants/resolver.js';
import type { AssistantRow } from '../assistants/assistants.tables.js';
import { findTwinById } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';

export interface TurnReads {
  twin(id: string): Promise<TwinRow | undefined>;
  standardAssistant(): Promise<AssistantRow>;
}

export function directTurnReads(db: Executor): TurnReads {
  return {
    twin: (id) => findTwinById(db, id),
    standardAssistant: () => standardAssistant(db),
  };
}

export function cachedTurnReads(db: Executor, feed: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>): TurnReads {
  const twins = createRowCache<TwinRow>(feed, { keyTables: ['institutions'] });
  // Stored under a name: the row it depends on is the one the fill brought.
  const standard = createRowCache<AssistantRow>(feed, { dependsOn: { assistants: (row) => [row.id] } });
  return {
    twin: (id) => twins.get(id, () => findTwinById(db, id)),
    standardAssistant: () => standard.get('standard', () => standardAssistant(db)),
  };
}
