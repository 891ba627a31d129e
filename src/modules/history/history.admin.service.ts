// Administration of history and feedback: lists scoped to the twins where the caller holds the
// list permission, bulk deletes confined to the twins where they hold the delete permission, and
// the retrieval entries of one record (its owner, or histories.list on its twin).
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { hasPermission, isMemberOf } from '../users/access.js';
import { presentAdminFeedback, presentAdminHistory } from './history.presenter.js';
import { deleteFeedback, deleteHistory, findHistory, listAdminHistory, listFeedback } from './history.repo.js';
import type { AdminFeedbackWire, AdminHistoryWire, RetrievalEntryWire } from './history.schemas.js';
import { HISTORY_NOT_FOUND, type Page } from './history.service.js';
import type { FeedbackRating } from './history.tables.js';
import { isEmptyScope, twinsWhere } from './twin-scope.js';

export interface AdminHistoryQuery {
  page: number;
  limit: number;
  institutionId?: string;
  userId?: string;
  conversationId?: string;
}

export interface AdminFeedbackQuery {
  page: number;
  limit: number;
  institutionId?: string;
  userId?: string;
  rating?: FeedbackRating;
}

export interface HistoryAdminService {
  listHistories(actor: Actor, query: AdminHistoryQuery): Promise<Page<AdminHistoryWire>>;
  deleteHistories(actor: Actor, ids: string[]): Promise<number>;
  ragSearch(actor: Actor, id: string): Promise<RetrievalEntryWire[]>;
  listFeedback(actor: Actor, query: AdminFeedbackQuery): Promise<Page<AdminFeedbackWire>>;
  deleteFeedback(actor: Actor, ids: string[]): Promise<number>;
}

export function createHistoryAdminService(db: Database): HistoryAdminService {
  return {
    async listHistories(actor, query) {
      const scope = await twinsWhere(db, actor, 'histories.list');
      if (isEmptyScope(scope)) throw new ForbiddenError();
      const { rows, total } = await listAdminHistory(db, { scope, ...query });
      return { success: true, data: rows.map(presentAdminHistory), page: query.page, limit: query.limit, total };
    },

    async deleteHistories(actor, ids) {
      const scope = await twinsWhere(db, actor, 'histories.delete');
      if (isEmptyScope(scope)) throw new ForbiddenError();
      return deleteHistory(db, ids, scope);
    },

    async ragSearch(actor, id) {
      const record = await findHistory(db, id);
      if (!record) throw new NotFoundError(HISTORY_NOT_FOUND);
      if (record.userId === actor.userId) return record.ragSearch;
      if (await hasPermission(db, actor, record.institutionId, 'histories.list')) return record.ragSearch;
      // A member of the record's twin learns only that they may not; anyone else learns nothing.
      if (await isMemberOf(db, actor, record.institutionId)) throw new ForbiddenError();
      throw new NotFoundError(HISTORY_NOT_FOUND);
    },

    async listFeedback(actor, query) {
      const scope = await twinsWhere(db, actor, 'feedback.list');
      if (isEmptyScope(scope)) throw new ForbiddenError();
      const { rows, total } = await listFeedback(db, { scope, ...query });
      return { success: true, data: rows.map(presentAdminFeedback), page: query.page, limit: query.limit, total };
    },

    async deleteFeedback(actor, ids) {
      const scope = await twinsWhere(db, actor, 'feedback.delete');
      if (isEmptyScope(scope)) throw new ForbiddenError();
      return deleteFeedback(db, ids, scope);
    },
  };
}
