// The memory and files modules as a turn's context: recalled memories (behaviour 7: personal ones only
// while the person's switch is on; shared ones always), retrieved passages of the caller's vault, and
// long-term memory extraction queued after the answer (never awaited).
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { DatabaseHandle } from '../../platform/db/client.js';
import type { JobLogger, JobQueue } from '../../platform/jobs/queue.js';
import { hasSearchableFiles, searchForTurn } from '../files/retrieval.js';
import { enqueueExtraction } from '../memory/extraction.js';
import { recallForTurn } from '../memory/recall.js';
import { findTurnPerson } from '../users/users.repo.js';
import type { TurnContextProviders } from './turn-context.js';
import type { BuiltinToolRunners } from './turn-tools.js';
import { AppError } from '../../platform/http/errors.js';
import { createMemoryService } from '../memory/memory.service.js';
import { cachedContextReads, directContextReads } from './context-reads.js';

export const PASSAGES_PER_TURN = 5;

export function createContextProviders(deps: {
  database: DatabaseHandle;
  jobs: Pick<JobQueue, 'send'>;
  log?: JobLogger;
  /** With a change feed, what every turn asks of files and memories is cached (context-reads.ts). */
  changes?: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>;
}): TurnContextProviders {
  const db = deps.database.db;
  const reads = deps.changes ? cachedContextReads(db, deps.changes) : directContextReads(db);
  return {
    async recall(caller, question) {
      if (caller.kind !== 'person' || !caller.actor.twinId) return { memories: [] };
      const { userId, twinId } = caller.actor;
      const candidates = (limit: number) => reads.recallable(twinId, userId, limit);
      const { memories } = await recallForTurn(db, { userId, twinId, userMemoryEnabled: 'as-set' }, question, { candidates });
      return { memories: memories.map(({ id, key, value, shared }) => ({ id, key, value, shared })) };
    },
    async retrieve(caller, question) {
      if (caller.kind !== 'person') return [];
      return searchForTurn(deps.database, caller.actor, question, { limit: PASSAGES_PER_TURN });
    },
    async searchable(caller) {
      return caller.kind === 'person' && hasSearchableFiles(deps.database, caller.actor, reads.searchableFiles);
    },
    async afterTurn(caller, turn, scene) {
      if (caller.kind !== 'person' || !caller.actor.twinId || !scene.longTermMemoryEnabled) return null;
      const { userId } = caller.actor;
      const twinId = caller.actor.twinId;
      try {
        // Queue only when long-term memory applies to this person now (the job checks again when it runs).
        const person = await findTurnPerson(db, userId);
        if (!person?.userMemoryEnabled) return null;
        return await enqueueExtraction(deps.jobs, { userId, institutionId: twinId, historyId: turn.historyId, question: turn.question, answer: turn.answer }, deps.log);
      } catch (err) {
        deps.log?.error({ err }, 'memory extraction could not be queued');
        return null;
      }
    },
  };
}

/**
 * The built-in tools' runners: a search of the caller's vault, and a personal memory saved on request
 * (this process's recall cache drops the twin's memories at once, so the next turn recalls it).
 */
export function createBuiltinToolRunners(deps: { database: DatabaseHandle; changes?: Pick<ChangeFeed, 'committed'> }): BuiltinToolRunners {
  const memory = createMemoryService(deps.database.db);
  return {
    fileSearch: (actor, query, signal) => searchForTurn(deps.database, actor, query, { limit: PASSAGES_PER_TURN, signal }),
    async remember(actor, key, value) {
      try {
        await memory.create(actor, { key_name: key.slice(0, 200) || 'note', key_value: value.slice(0, 4_000) });
        const twinId = actor.launchScope?.twinId ?? actor.twinId;
        if (twinId) deps.changes?.committed({ table: 'memory_parameters', key: twinId });
        return true;
      } catch (error) {
        // Behaviour 7: with Enable User Memory off nothing is saved.
        if (error instanceof AppError && error.code === 'USER_MEMORY_DISABLED') return false;
        throw error;
      }
    },
  };
}
