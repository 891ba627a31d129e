// /api/admin/assistants, /api/admin/assistant/{id}, /api/admin/assistants/bulk-delete.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, messageSchema, objectId, paginationQuery, type App } from '../../platform/http/schemas.js';
import type { AdminAssistantService } from './admin-assistants.service.js';
import { assistantEnvelope, assistantSchema, assistantStatusSchema, assistantUpdateBody, assistantUpdateResult } from './assistants.schemas.js';
import type { AssistantService } from './assistants.service.js';

const TAGS = ['admin: assistants'];
const listQuery = paginationQuery.extend({ status: assistantStatusSchema.optional(), institution: objectId.optional() });

export function adminAssistantRoutes(app: App, admin: AdminAssistantService, assistants: AssistantService): void {
  app.get(
    '/api/admin/assistants',
    {
      schema: {
        tags: TAGS,
        summary: 'List assistants across the twins the caller administers',
        description:
          "Paginated, newest first, every status (filter with status), across the twins where the caller holds assistants.list; super admins see every assistant, system and personal ones included. 403 when the caller holds assistants.list nowhere. canEdit tells whether the caller holds assistants.edit on the assistant's twin.",
        querystring: listQuery,
        response: {
          200: z.object({ success: z.literal(true), data: z.array(assistantSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await admin.list(actorOf(request), request.query)) }),
  );

  app.get(
    '/api/admin/assistant/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read an assistant (admin)',
        description: 'Deleted assistants are shown to those who hold assistants.edit on their twin. Outside the caller\'s twins: 404 "Assistant not found!".',
        params: idParams,
        response: { 200: assistantEnvelope, ...failures(400, 401, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await admin.get(actorOf(request), request.params.id) }),
  );

  app.put(
    '/api/admin/assistant/:id',
    {
      config: { validationMessage: 'Invalid Properties' },
      schema: {
        tags: TAGS,
        summary: 'Edit an assistant (admin)',
        description:
          'The rules of PUT /api/user/assistant/{id}, and a deleted assistant may be edited (status active restores it) by those who hold assistants.edit on its twin.',
        params: idParams,
        body: assistantUpdateBody.optional(),
        response: { 200: assistantUpdateResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => admin.update(actorOf(request), request.params.id, request.body ?? {}),
  );

  app.delete(
    '/api/admin/assistant/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete an assistant (admin)',
        description: 'As DELETE /api/user/assistant/{id}: status becomes deleted; needs assistants.delete on its twin unless the caller owns it.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await assistants.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Assistant deleted successfully' };
    },
  );

  app.post(
    '/api/admin/assistants/bulk-delete',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete several assistants (admin)',
        description:
          'Sets status deleted on those of ids in the twins where the caller holds assistants.delete (super admins: any); rows elsewhere, already deleted ones and the standard assistant are left alone. changed counts the rows deleted.',
        body: z.object({ ids: z.array(objectId).min(1).max(500) }),
        response: { 200: changedSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, changed: await admin.bulkDelete(actorOf(request), request.body.ids) }),
  );
}
