// Administration of history and feedback: lists scoped to the twins where the caller holds the
// list permission, bulk deletes confined to the twins where they hold the delete permission, and
// the retrieval entries of one record (its owner, or histories.list on its twin), and one feedback
// row read (feedback.list), triaged or deleted (feedback.delete) within those same twins.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import type { Permission } from '../../platform/http/permissions.js';
import { requireAccess } from '../access/access.js';
import { presentAdminFeedback, presentAdminHistory } from './history.presenter.js';
import { deleteFeedback, findAdminFeedback, listFeedback, updateFeedbackReview, type AdminFeedbackRow } from './feedback.repo.js';
import { deleteHistory, findHistory, listAdminHistory, toTwinScope } from './history.repo.js';
import type { AdminFeedbackWire, AdminHistoryWire, RetrievalEntryWire } from './history.schemas.js';
import type { Page } from './history.service.js';
import type { FeedbackRating, FeedbackStatus } from './history.tables.js';

export interface AdminHistoryQuery {
  page: number;
  limit: number;
  twinId?: string;
  userId?: string;
  conversationId?: string;
}

export interface AdminFeedbackQuery {
  page: number;
  limit: number;
  twinId?: string;
  userId?: string;
  rating?: FeedbackRating;
}

export const FEEDBACK_NOT_FOUND = 'Feedback not found';

export interface FeedbackReview {
  status?: FeedbackStatus;
  adminNote?: string;
}

export interface HistoryAdminService {
  listHistories(actor: Actor, query: AdminHistoryQuery): Promise<Page<AdminHistoryWire>>;
  deleteHistories(actor: Actor, ids: string[]): Promise<number>;
  ragSearch(actor: Actor, id: string): Promise<RetrievalEntryWire[]>;
  listFeedback(actor: Actor, query: AdminFeedbackQuery): Promise<Page<AdminFeedbackWire>>;
  deleteFeedback(actor: Actor, ids: string[]): Promise<number>;
  getFeedback(actor: Actor, id: string): Promise<AdminFeedbackWire>;
  reviewFeedback(actor: Actor, id: string, review: FeedbackReview): Promise<AdminFeedbackWire>;
  removeFeedback(actor: Actor, id: string): Promise<void>;
}

export function createHistoryAdminService(db: Database): HistoryAdminService {
  /**
   * The feedback row, if it lies in a twin where the actor holds the permission. No grant anywhere →
   * 403 before looking; a row of the actor's own twin without the grant → 403; any other row → 404.
   */
  async function feedbackInScope(actor: Actor, id: string, permission: Permission): Promise<AdminFeedbackRow> {
    const scope = await requireAccess(db, actor, 'history.admin', { permission });
    const row = await findAdminFeedback(db, id);
    await requireAccess(db, actor, 'feedback.read', { feedback: row?.feedback, scope });
    return row!;
  }

  return {
    async listHistories(actor, query) {
      const scope = toTwinScope(await requireAccess(db, actor, 'history.admin', { permission: 'histories.list' }));
      const { rows, total } = await listAdminHistory(db, { scope, ...query });
      return { success: true, data: rows.map(presentAdminHistory), page: query.page, limit: query.limit, total };
    },

    async deleteHistories(actor, ids) {
      const scope = toTwinScope(await requireAccess(db, actor, 'history.admin', { permission: 'histories.delete' }));
      return deleteHistory(db, ids, scope);
    },

    async ragSearch(actor, id) {
      const record = await findHistory(db, id);
      await requireAccess(db, actor, 'history.read', { record });
      return record!.ragSearch;
    },

    async listFeedback(actor, query) {
      const scope = toTwinScope(await requireAccess(db, actor, 'history.admin', { permission: 'feedback.list' }));
      const { rows, total } = await listFeedback(db, { scope, ...query });
      return { success: true, data: rows.map(presentAdminFeedback), page: query.page, limit: query.limit, total };
    },

    async deleteFeedback(actor, ids) {
      const scope = toTwinScope(await requireAccess(db, actor, 'history.admin', { permission: 'feedback.delete' }));
      return deleteFeedback(db, ids, scope);
    },
  
    async getFeedback(actor, id) {
      return presentAdminFeedback(await feedbackInScope(actor, id, 'feedback.list'));
    },

    async reviewFeedback(actor, id, review) {
      await feedbackInScope(actor, id, 'feedback.delete');
      const changes = { status: review.status, adminNote: review.adminNote };
      if (changes.status !== undefined || changes.adminNote !== undefined) await updateFeedbackReview(db, id, changes);
      const row = await findAdminFeedback(db, id);
      if (!row) throw new NotFoundError(FEEDBACK_NOT_FOUND);
      return presentAdminFeedback(row);
    },


    async removeFeedback(actor, id) {
      const row = await feedbackInScope(actor, id, 'feedback.delete');
      await deleteFeedback(db, [id], { ids: [row.feedback.twinId] });
    },
  };
}
