// /api/user/memory: the caller's personal memory parameters and the shared memory of the twin they
// work in (the launch twin of a launch session, else the current twin).
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import { createMemoryBody, editMemoryBody, memoryListResponse, memoryResponse } from './memory.schemas.js';
import type { MemoryService } from './memory.service.js';

const SCOPE =
  'Rows belong to one twin: personal rows to the twin the author worked in when writing them, shared rows to their twin. ' +
  "Another person's personal row, or any row of another twin, answers 404 Memory not found.";
const EDIT_RULE =
  'The author may always change their own rows. Anyone else may change a shared row only as a super admin or holding ' +
  'institutions.edit on its twin (its administrators); otherwise 403 MEMORY_NOT_EDITABLE.';
const SHARE_RULE =
  "When the twin's memoryAdminsOnly is on, only its administrators (institutions.edit) and super admins may create a shared row " +
  'or switch a row to shared; others get 403 MEMORY_ADMINS_ONLY.';

export function memoryRoutes(app: App, service: MemoryService): void {
  app.get(
    '/api/user/memory',
    {
      schema: {
        tags: ['memory'],
        summary: 'List my memory and the shared memory of my twin',
        description: `${SCOPE} Newest first, up to 500 rows. Rows stay listed when Enable User Memory is off (behaviour 7). editable says whether the caller may change or delete the row; isAuthor whether they wrote it. No current twin: an empty list.`,
        response: { 200: memoryListResponse, ...failures(401) },
      },
    },
    async (request) => ({ success: true as const, data: await service.list(actorOf(request)) }),
  );

  app.post(
    '/api/user/memory',
    {
      schema: {
        tags: ['memory'],
        summary: 'Create a memory parameter',
        description:
          `The row belongs to the caller's working twin (400 NO_TWIN without one); key_namespace defaults to "default", shared to false. ${SHARE_RULE} ` +
          'With Enable User Memory off (behaviour 7) a personal row is not saved: 403 USER_MEMORY_DISABLED; shared rows are unaffected.',
        body: createMemoryBody,
        response: { 201: memoryResponse, ...failures(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.patch(
    '/api/user/memory/:id',
    {
      schema: {
        tags: ['memory'],
        summary: 'Edit a memory parameter',
        description: `Only key_value, key_description and shared are applied; other keys are ignored. ${EDIT_RULE} ${SHARE_RULE} ${SCOPE}`,
        params: idParams,
        body: editMemoryBody,
        response: { 200: memoryResponse, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.edit(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/user/memory/:id',
    {
      schema: {
        tags: ['memory'],
        summary: 'Delete a memory parameter',
        description: `The same rule as editing: ${EDIT_RULE} ${SCOPE}`,
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Memory deleted' };
    },
  );
}
