// /api/admin/sessions: a twin's live sessions, revoked one by one or in bulk.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, messageSchema, objectId, paginationQuery, twinFilter, type App } from '../../platform/http/schemas.js';
import { adminSessionSchema } from './admin-sessions.schemas.js';
import type { AdminSessionsService } from './admin-sessions.service.js';

export function adminSessionRoutes(app: App, service: AdminSessionsService): void {
  app.get(
    '/api/admin/sessions',
    {
      schema: {
        tags: ['admin'],
        summary: "List a twin's live sessions",
        description:
          'Sessions opened in the twin (the current one, or `institutionId`), not revoked and not expired, newest ' +
          'first. Needs sessions.list in that twin.',
        querystring: paginationQuery.omit({ search: true }).extend({ institutionId: objectId.optional() }),
        response: {
          200: z.object({ success: z.literal(true), data: z.array(adminSessionSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.list(actorOf(request), twinFilter(request.query))) }),
  );

  app.delete(
    '/api/admin/session/:id',
    {
      schema: {
        tags: ['admin'],
        summary: 'Revoke a session',
        description: 'Its token stops working at once. Needs sessions.delete in its twin; any other session answers 404.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 404) },
      },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Session revoked' };
    },
  );

  app.post(
    '/api/admin/sessions/bulk-delete',
    {
      schema: {
        tags: ['admin'],
        summary: 'Revoke several sessions',
        description:
          "Sessions of the caller's current twin are revoked; other ids (another twin's, unknown, already ended) " +
          'are skipped. `changed` counts the revoked ones. Needs sessions.delete in the current twin.',
        body: z.object({ ids: z.array(objectId).min(1).max(500) }),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkRemove(actorOf(request), request.body.ids) }),
  );
}
