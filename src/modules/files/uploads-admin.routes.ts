// /api/admin/uploads: the admin uploads family (list per twin, delete, bulk delete).
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, twinFilter, type App } from '../../platform/http/schemas.js';
import { adminUploadsQuery, fileListSchema } from './files.schemas.js';
import type { UploadsAdminService } from './uploads-admin.service.js';

const tags = ['admin: uploads'];

export function uploadsAdminRoutes(app: App, uploads: UploadsAdminService): void {
  app.get(
    '/api/admin/uploads',
    {
      schema: {
        tags,
        summary: "List a twin's uploads",
        description: 'Every file of the twin (default: the current twin), newest first. Needs uploads.list in that twin (403 otherwise).',
        querystring: adminUploadsQuery,
        response: { 200: fileListSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, ...(await uploads.list(actorOf(request), twinFilter(request.query))) }),
  );

  app.delete(
    '/api/admin/upload/:id',
    {
      schema: {
        tags,
        summary: 'Delete an upload',
        description: 'Deletes the file, its chunks and stored bytes. Needs uploads.delete in its twin; a file of a twin the caller has no rights in answers 404.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await uploads.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Upload deleted' };
    },
  );

  app.post(
    '/api/admin/uploads/bulk-delete',
    {
      schema: {
        tags,
        summary: 'Delete uploads in bulk',
        description: 'Deletes the listed files that sit in twins where the caller holds uploads.delete; others are skipped. changed counts the deleted ones.',
        body: idsBody(),
        response: { 200: changedSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, changed: await uploads.bulkDelete(actorOf(request), request.body.ids) }),
  );
}

