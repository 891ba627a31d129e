// /api/admin/questions, /api/admin/question and /api/user/questions: a twin's suggested questions.
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, type App } from '../../platform/http/schemas.js';
import { createQuestionBody, editQuestionBody, listQuestionsQuery, questionList, questionResult, userQuestionList } from './questions.schemas.js';
import type { QuestionsService } from './questions.service.js';

const tags = ['admin: questions'];
const RULES =
  "Suggested questions show on a twin's chat start screen and in its public branding, in `order` (then oldest first). " +
  'Seeing them needs questions.list in their twin, changing them questions.edit (a twin administrator holds both, a super ' +
  "admin holds them everywhere); another twin's question answers 404 QUESTION_NOT_FOUND. ";

export function questionRoutes(app: App, service: QuestionsService): void {
  app.get(
    '/api/admin/questions',
    {
      schema: {
        tags,
        summary: 'List suggested questions (paginated, searchable by text)',
        description: RULES + 'Of every twin where the caller holds questions.list, or of one of them (`institution`; a twin outside the scope lists none). No grant anywhere: 403.',
        querystring: listQuestionsQuery,
        response: { 200: questionList, ...failures(400, 401, 403) },
      },
    },
    async (request) => service.list(actorOf(request), request.query),
  );

  app.get(
    '/api/admin/question/:id',
    { schema: { tags, summary: 'One suggested question', description: RULES, params: idParams, response: { 200: questionResult, ...failures(400, 401, 404) } } },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.post(
    '/api/admin/question',
    {
      schema: {
        tags,
        summary: 'Add a suggested question',
        description:
          RULES +
          '`text` is required and non-empty (400 VALIDATION_FAILED naming body.text). The twin is `institution`, or the ' +
          "caller's current twin (400 INSTITUTION_REQUIRED without either); an unknown twin or one the caller is not in 404, " +
          "a member without questions.edit 403. `assistantId` must be one of the twin's assistants or a system assistant (400 INVALID_ASSISTANT).",
        body: createQuestionBody,
        response: { 201: questionResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.put(
    '/api/admin/question/:id',
    {
      schema: {
        tags,
        summary: 'Edit a suggested question',
        description: RULES + 'text, assistantId (null: any assistant) and order are applied; the twin does not change; unknown keys are dropped.',
        params: idParams,
        body: editQuestionBody,
        response: { 200: questionResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.edit(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/question/:id',
    {
      schema: { tags, summary: 'Delete a suggested question', description: RULES, params: idParams, response: { 200: messageSchema, ...failures(400, 401, 403, 404) } },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Question deleted' };
    },
  );

  app.post(
    '/api/admin/questions/bulk-delete',
    {
      schema: {
        tags,
        summary: 'Delete many suggested questions',
        description: RULES + 'Questions outside the twins where the caller holds questions.edit are left alone; `changed` counts those deleted. No grant anywhere: 403.',
        body: idsBody(500),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkDelete(actorOf(request), request.body.ids) }),
  );

  app.get(
    '/api/user/questions',
    {
      schema: {
        tags: ['questions'],
        summary: "The current twin's suggested questions",
        description: "What the chat's start screen shows: the current twin's questions in order (at most 100); none when the person is in no twin.",
        response: { 200: userQuestionList, ...failures(401) },
      },
    },
    async (request) => service.ofCurrentTwin(actorOf(request)),
  );
}
