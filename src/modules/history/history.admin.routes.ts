// /api/admin: histories (list, bulk delete), the retrieval entries of one record, and feedback
// (list, bulk delete, read, triage, delete one). Every list and action is confined to the twins where the caller holds the
// permission it names; rows elsewhere are neither shown nor actionable.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, twinFilter, type App } from '../../platform/http/schemas.js';
import type { HistoryAdminService } from './history.admin.service.js';
import {
  adminFeedbackListQuery,
  adminFeedbackSchema,
  adminFeedbackUpdateBody,
  adminHistoryListQuery,
  adminHistorySchema,
  page,
  retrievalEntrySchema,
} from './history.schemas.js';

const feedbackData = z.object({ success: z.literal(true), data: adminFeedbackSchema });
const ONE_FEEDBACK =
  'Feedback of a twin where the caller lacks the permission answers 404 Feedback not found, as do unknown ids; a member of the row’s own twin without it, or a caller who holds it in no twin, gets 403 Not authorized.';
const NO_GRANT = 'A caller who holds the permission in no twin gets 403 Not authorized.';

export function historyAdminRoutes(app: App, service: HistoryAdminService): void {
  app.get(
    '/api/admin/histories',
    {
      schema: {
        tags: ['admin', 'history'],
        summary: 'List histories',
        description: `Records of every twin where the caller holds histories.list (all twins for a super admin), newest first; filter by institutionId, userId or conversationId. Items have the list shape (no working detail) plus userEmail, userName and institutionName. A filter naming a twin outside that scope gives an empty page. ${NO_GRANT}`,
        querystring: adminHistoryListQuery,
        response: { 200: page(adminHistorySchema), ...failures(400, 401, 403) },
      },
    },
    async (request) => service.listHistories(actorOf(request), twinFilter(request.query)),
  );

  app.post(
    '/api/admin/histories/bulk-delete',
    {
      schema: {
        tags: ['admin', 'history'],
        summary: 'Delete histories in bulk',
        description: `Deletes the listed records that lie in twins where the caller holds histories.delete; others are left alone. changed counts only records that were deleted now (not unknown, foreign or already deleted ones). Deleting erases question, answer, working detail and feedback, and keeps usage and credits. ${NO_GRANT}`,
        body: idsBody(),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.deleteHistories(actorOf(request), request.body.ids) }),
  );

  app.get(
    '/api/admin/history/:id/ragSearch',
    {
      schema: {
        tags: ['admin', 'history'],
        summary: 'Retrieval entries of a history record',
        description:
          'The owner of the record sees their own; anyone else needs histories.list on the twin of the record. A member of that twin without it gets 403 Not authorized; a record of a twin the caller does not belong to answers 404 History not found. Confidential chunks are already cut to their preview; once expired, chunkText reads "Details expired after 180 days".',
        params: idParams,
        response: { 200: z.object({ success: z.literal(true), ragSearch: z.array(retrievalEntrySchema) }), ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, ragSearch: await service.ragSearch(actorOf(request), request.params.id) }),
  );

  app.get(
    '/api/admin/feedback',
    {
      schema: {
        tags: ['admin', 'feedback'],
        summary: 'List feedback on answers',
        description: `Ratings people gave on answers, in every twin where the caller holds feedback.list, newest first; filter by institutionId, userId or rating. Each item carries the rated question and answer. ${NO_GRANT}`,
        querystring: adminFeedbackListQuery,
        response: { 200: page(adminFeedbackSchema), ...failures(400, 401, 403) },
      },
    },
    async (request) => service.listFeedback(actorOf(request), twinFilter(request.query)),
  );

  app.post(
    '/api/admin/feedback/bulk-delete',
    {
      schema: {
        tags: ['admin', 'feedback'],
        summary: 'Delete feedback in bulk',
        description: `Deletes the listed feedback rows (ids from GET /api/admin/feedback) that lie in twins where the caller holds feedback.delete; changed counts only rows deleted now. The history records stay. ${NO_GRANT}`,
        body: idsBody(),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.deleteFeedback(actorOf(request), request.body.ids) }),
  );

  app.get(
    '/api/admin/feedback/:id',
    {
      schema: {
        tags: ['admin', 'feedback'],
        summary: 'Read one feedback row',
        description: `The feedback row in the list shape (rated question and answer, status, adminNote). Needs feedback.list on the row’s twin. ${ONE_FEEDBACK}`,
        params: idParams,
        response: { 200: feedbackData, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.getFeedback(actorOf(request), request.params.id) }),
  );

  app.put(
    '/api/admin/feedback/:id',
    {
      schema: {
        tags: ['admin', 'feedback'],
        summary: 'Triage one feedback row',
        description: `Sets status ('new' | 'reviewed') and/or adminNote (trimmed, at most 2000 characters); unknown keys are ignored and an empty body changes nothing. Needs feedback.delete on the row’s twin: there is no separate edit permission, and the right to remove feedback is the right to manage it. The person's rating and comment are never changed here; when they rate the answer again, status goes back to 'new' (the note stays). ${ONE_FEEDBACK}`,
        params: idParams,
        body: adminFeedbackUpdateBody,
        response: { 200: feedbackData, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.reviewFeedback(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/feedback/:id',
    {
      schema: {
        tags: ['admin', 'feedback'],
        summary: 'Delete one feedback row',
        description: `Removes the rating; the history record stays and its owner may rate it again. Needs feedback.delete on the row’s twin. ${ONE_FEEDBACK}`,
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await service.removeFeedback(actorOf(request), request.params.id);
      return { success: true as const, message: 'Feedback deleted' };
    },
  );
}
