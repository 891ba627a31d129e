// /api/admin: histories (list, bulk delete), the retrieval entries of one record, and feedback
// (list, bulk delete). Every list and action is confined to the twins where the caller holds the
// permission it names; rows elsewhere are neither shown nor actionable.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, type App } from '../../platform/http/schemas.js';
import type { HistoryAdminService } from './history.admin.service.js';
import {
  adminFeedbackListQuery,
  adminFeedbackSchema,
  adminHistoryListQuery,
  adminHistorySchema,
  bulkDeleteBody,
  page,
  retrievalEntrySchema,
} from './history.schemas.js';

const changedSchema = z.object({ success: z.literal(true), changed: z.number().int() });
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
    async (request) => service.listHistories(actorOf(request), request.query),
  );

  app.post(
    '/api/admin/histories/bulk-delete',
    {
      schema: {
        tags: ['admin', 'history'],
        summary: 'Delete histories in bulk',
        description: `Deletes the listed records that lie in twins where the caller holds histories.delete; others are left alone. changed counts only records that were deleted now (not unknown, foreign or already deleted ones). Deleting erases question, answer, working detail and feedback, and keeps usage and credits. ${NO_GRANT}`,
        body: bulkDeleteBody,
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
    async (request) => service.listFeedback(actorOf(request), request.query),
  );

  app.post(
    '/api/admin/feedback/bulk-delete',
    {
      schema: {
        tags: ['admin', 'feedback'],
        summary: 'Delete feedback in bulk',
        description: `Deletes the listed feedback rows (ids from GET /api/admin/feedback) that lie in twins where the caller holds feedback.delete; changed counts only rows deleted now. The history records stay. ${NO_GRANT}`,
        body: bulkDeleteBody,
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.deleteFeedback(actorOf(request), request.body.ids) }),
  );
}
