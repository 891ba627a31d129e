// A person's own history in the twin they are working in: list (by conversation), one record with its
// working detail, delete, and feedback on an answer. Another person's record, or one of another twin,
// answers 404 as if it did not exist.
import type { Database } from '../../platform/db/client.js';
import { isVisitor, type Actor, type Caller } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { presentFeedback, presentHistoryDetail, presentHistorySummary } from './history.presenter.js';
import { findFeedback, upsertFeedback } from './feedback.repo.js';
import { deleteHistory, findHistory, listHistory } from './history.repo.js';
import type { FeedbackWire, HistoryDetailWire, HistorySummaryWire } from './history.schemas.js';
import type { FeedbackRating, HistoryRow } from './history.tables.js';

export const HISTORY_NOT_FOUND = 'History not found';

export interface Page<T> {
  success: true;
  data: T[];
  page: number;
  limit: number;
  total: number;
}

export interface HistoryService {
  /** A person's records, or a visitor's own in the twin its session is bound to. */
  list(caller: Caller, query: { page: number; limit: number; conversationId?: string; status?: 'streaming' }): Promise<Page<HistorySummaryWire>>;
  get(actor: Actor, id: string): Promise<HistoryDetailWire>;
  remove(actor: Actor, id: string): Promise<void>;
  giveFeedback(actor: Actor, id: string, input: { rating: FeedbackRating; comment?: string }): Promise<FeedbackWire>;
}

/** The twin whose history the person sees: the launch twin of a launch session, else the current twin. */
export function workingTwin(actor: Actor): string | null {
  return actor.launchScope?.twinId ?? actor.twinId;
}

/** Whose records, in which twin: a visitor's turns carry its id in user_id (conversations/turn-types.ts). */
function ownerOf(caller: Caller): { twinId: string | null; userId: string } {
  return isVisitor(caller) ? { twinId: caller.twinId, userId: caller.visitorId } : { twinId: workingTwin(caller), userId: caller.userId };
}

export function createHistoryService(db: Database): HistoryService {
  async function ownRecord(actor: Actor, id: string): Promise<HistoryRow> {
    const twin = workingTwin(actor);
    const record = await findHistory(db, id);
    if (!record || !twin || record.twinId !== twin || record.userId !== actor.userId) throw new NotFoundError(HISTORY_NOT_FOUND);
    return record;
  }

  return {
    async list(caller, query) {
      const { twinId: twin, userId } = ownerOf(caller);
      if (!twin) return { success: true, data: [], page: query.page, limit: query.limit, total: 0 };
      const { rows, total } = await listHistory(db, { scope: { ids: [twin] }, userId, conversationId: query.conversationId, status: query.status, page: query.page, limit: query.limit });
      return { success: true, data: rows.map(presentHistorySummary), page: query.page, limit: query.limit, total };
    },

    async get(actor, id) {
      const record = await ownRecord(actor, id);
      return presentHistoryDetail(record, await findFeedback(db, record.twinId, record.id));
    },

    async remove(actor, id) {
      const record = await ownRecord(actor, id);
      await deleteHistory(db, [record.id], { ids: [record.twinId] }, actor.userId);
    },

    async giveFeedback(actor, id, input) {
      const record = await ownRecord(actor, id);
      const row = await upsertFeedback(db, {
        twinId: record.twinId,
        historyId: record.id,
        userId: actor.userId,
        rating: input.rating,
        comment: input.comment ?? '',
      });
      return presentFeedback(row);
    },
  };
}
