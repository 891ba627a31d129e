// /api/user/data: the caller's own data (counts, export, scoped delete), and the export's download link.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, type App } from '../../platform/http/schemas.js';
import { attachment } from '../files/files.routes.js';
import { DELETE_GRACE_DAYS } from './personal-data.retention.js';
import { countsSchema, deletedSchema, deleteBody, downloadQuery, exportStartedSchema, exportStatusSchema } from './personal-data.schemas.js';
import type { PersonalDataService } from './personal-data.service.js';

const tags = ['personal data'];
const SCOPE =
  "Personal scope only: the caller's own rows in every twin they have worked in; never a twin's shared memory, files shared as a twin's knowledge, " +
  "assistants a twin owns, or another person's rows. A launch session answers 403 LAUNCH_SCOPE_STEP_UP until it steps up with a code.";

export function personalDataRoutes(app: App, service: PersonalDataService): void {
  app.get(
    '/api/user/data',
    {
      schema: {
        tags,
        summary: 'Count my data',
        description: `${SCOPE} conversations: those holding one of my live records; favorites: my favorite assistants; sessions: my open sessions.`,
        response: { 200: countsSchema, ...failures(401, 403) },
      },
    },
    async (request) => ({ success: true as const, counts: await service.counts(actorOf(request)) }),
  );

  app.post(
    '/api/user/data/export',
    {
      schema: {
        tags,
        summary: 'Export my data as a ZIP',
        description:
          `${SCOPE} Starts a durable export job and answers 202 at once. The archive holds README.txt, one JSON file per kind ` +
          '(account, conversations, history, files, collections, memory, assistants, favorites, feedback, sessions) in the shapes this API ' +
          'answers with, and the original uploaded files under files/. When it is ready a mail carries a link that works for 24 hours. ' +
          'One export at a time: while one is queued or running, asking again answers that one (its exportId and status).',
        response: { 202: exportStartedSchema, ...failures(401, 403) },
      },
    },
    async (request, reply) => {
      const started = await service.startExport(actorOf(request));
      return reply.code(202).send({ success: true as const, exportId: started.exportId, status: started.status });
    },
  );

  app.get(
    '/api/user/data/export/:id',
    {
      schema: {
        tags,
        summary: 'The status of one of my exports',
        description: "queued, running (progress 0-99), ready (progress 100) or failed. Another person's export, or an unknown id: 404 EXPORT_NOT_FOUND.",
        params: idParams,
        response: { 200: exportStatusSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, ...(await service.exportStatus(actorOf(request), request.params.id)) }),
  );

  app.get(
    '/api/user/data/export/:id/download',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Download an export (the mailed link)',
        description:
          'No session needed: the token of the mailed link is the credential. The ZIP as an attachment. A wrong token, a token of another ' +
          'export, or an export not ready: 404 EXPORT_NOT_FOUND. After the link expires (24 hours after the archive was ready; the ' +
          'retention job then deletes the archive): 410 EXPORT_EXPIRED.',
        params: idParams,
        querystring: downloadQuery,
        response: { 200: z.unknown().describe('the ZIP bytes'), ...failures(400, 404, 410) },
      },
    },
    async (request, reply) => {
      const archive = await service.download(request.params.id, request.query.token);
      reply
        .header('content-type', 'application/zip')
        .header('content-disposition', attachment(`personal-data-${archive.created.toISOString().slice(0, 10)}.zip`))
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff');
      if (archive.size !== null) reply.header('content-length', String(archive.size));
      return reply.send(archive.stream);
    },
  );

  app.post(
    '/api/user/data/delete',
    {
      schema: {
        tags,
        summary: 'Delete my data of one scope',
        description:
          `${SCOPE} scope history (my records in every twin; their feedback goes with them), files (my personal files, their chunks and my ` +
          'collections), memory (my personal memory rows), assistants (my personal assistants, also taken out of everyone\'s favorites) or all. ' +
          'Needs password, or code (a current authenticator code or an unused backup code): without either, 403 REAUTHENTICATION_REQUIRED; ' +
          'a wrong one, 400 INVALID_PASSWORD or INVALID_CODE (counted by the sign-in throttle: 429 after too many). ' +
          'Deleted rows disappear at once from every list, search, retrieval and export; a history record\'s text is erased at once. ' +
          `The retention job purges them for good ${DELETE_GRACE_DAYS} days later. Answers how many rows of each kind it deleted.`,
        body: deleteBody,
        response: { 200: deletedSchema, ...failures(400, 401, 403, 429) },
      },
    },
    async (request) => ({ success: true as const, deleted: await service.remove(actorOf(request), request.body, request.ip) }),
  );
}
