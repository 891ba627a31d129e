// /api/user/history: the signed-in person's own questions and answers in the twin they work in.
import { z } from 'zod';
import { actorOf, callerOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import { feedbackBody, feedbackSchema, historyDetailSchema, historyListQuery, historySummarySchema, page } from './history.schemas.js';
import type { HistoryService } from './history.service.js';

const SCOPE =
  'A person sees only their own records of the twin they are working in (the launch twin of a launch session); ' +
  "another person's record, or one of another twin, answers 404 History not found.";

export function historyRoutes(app: App, service: HistoryService): void {
  app.get(
    '/api/user/history',
    {
      // A visitor of an embedded twin lists its own records in that twin.
      config: { visitors: true },
      schema: {
        tags: ['history'],
        summary: 'List my history',
        description: `${SCOPE} Newest first; filter by conversationId to read one conversation, and by status=streaming for the answers still running (follow one with GET /api/ai/stream/{historyId}). Items omit the working detail: ragSearch is replaced by hasRagSearch, ragSearchCount and ragSearchMode, and tool calls, subagents, memories and reasoning by their counts.`,
        querystring: historyListQuery,
        response: { 200: page(historySummarySchema), ...failures(400, 401) },
      },
    },
    async (request) => service.list(callerOf(request), request.query),
  );

  app.get(
    '/api/user/history/:id',
    {
      schema: {
        tags: ['history'],
        summary: 'One history record with its working detail',
        description: `${SCOPE} Once the working detail has expired (180 days after the conversation's last activity) its text reads "Details expired after 180 days", counts are kept, and detailsExpired is true.`,
        params: idParams,
        response: { 200: z.object({ success: z.literal(true), data: historyDetailSchema }), ...failures(400, 401, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.delete(
    '/api/user/history/:id',
    {
      schema: {
        tags: ['history'],
        summary: 'Delete one of my history records',
        description: `${SCOPE} The record disappears from every view and its question, answer, working detail and feedback are erased; usage, models and credits stay for usage limits and billing.`,
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 404) },
      },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'History deleted' };
    },
  );

  app.post(
    '/api/user/history/:id/feedback',
    {
      schema: {
        tags: ['history'],
        summary: 'Rate an answer',
        description: `${SCOPE} One rating per record: posting again replaces the rating and comment. The comment is optional, trimmed, at most 2000 characters.`,
        params: idParams,
        body: feedbackBody,
        response: { 200: z.object({ success: z.literal(true), data: feedbackSchema }), ...failures(400, 401, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.giveFeedback(actorOf(request), request.params.id, request.body) }),
  );
}
