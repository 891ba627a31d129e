// /api/ai/stream/{historyId}: resume an answer over SSE, and stop it from any tab (contract: resumable answers).
import { z } from 'zod';
import { callerOf } from '../../platform/http/auth-guard.js';
import { isVisitor } from '../../platform/http/actor.js';
import { failures, objectId, type App } from '../../platform/http/schemas.js';
import { afterSeqOf, type AnswerOwner, type AnswerResume } from './answer-resume.js';

const params = z.object({ historyId: objectId });
const OWNER = "Only the answer's owner: another person's answer, or an unknown one, answers 404.";

export function answerStreamRoutes(app: App, resume: AnswerResume): void {
  app.get(
    '/api/ai/stream/:historyId',
    {
      config: { auth: 'bearer', visitors: true },
      schema: {
        tags: ['conversations'],
        summary: 'Resume an answer: the frames after a seq, then live to its end',
        description:
          'Authorization: Bearer only. `Last-Event-ID: <historyId>:<seq>` (what each SSE frame\'s `id:` says; it wins) or `after=<seq>` (default 0: from the start) names the last frame the client has. ' +
          'The answer replays every frame after it (started, stream, tool, complete or error, done: each with seq and historyId, and the `id:` line), without gaps or repeats, then follows the answer live to done, whichever process produces it; an answer that ended replays to its end. ' +
          'An answer whose process died ends with error {code: INTERRUPTED} and done. A running answer whose first frames have not reached the log yet (an overloaded process or Redis) is waited for, up to 30 s, before the stream opens; it is never called interrupted for that. ' +
          `Frames are kept while the answer runs and STREAM_RETENTION_SECONDS (600) after it ends; after that 410 STREAM_EXPIRED (the answer is on its history record). ${OWNER}`,
        params,
        querystring: z.object({ after: z.coerce.number().int().min(0).max(1e9).optional() }),
        produces: ['text/event-stream'],
        response: { ...failures(400, 401, 404, 410) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { historyId } = request.params;
      const header = request.headers['last-event-id'];
      const afterSeq = afterSeqOf(historyId, Array.isArray(header) ? header[0] : header, request.query.after);
      await resume.resumeSse(ownerOf(caller), historyId, afterSeq, request, reply);
    },
  );

  app.post(
    '/api/ai/stream/:historyId/cancel',
    {
      config: { visitors: true },
      schema: {
        tags: ['conversations'],
        summary: 'Stop an answer, from any tab or process',
        description:
          'Ends the answer as cancel_request does, on whichever process produces it: the part generated is recorded and charged, and its readers get done. ' +
          `{success: true, cancelled: false} when the answer had already ended. ${OWNER}`,
        params,
        response: { 200: z.object({ success: z.literal(true), cancelled: z.boolean() }), ...failures(400, 401, 404) },
      },
    },
    async (request) => resume.cancel(ownerOf(callerOf(request)), request.params.historyId),
  );
}

/** Whose answers a caller may resume: a person's, or a visitor session's own; a launch session's in its twin only. */
function ownerOf(caller: ReturnType<typeof callerOf>): AnswerOwner {
  if (isVisitor(caller)) return { id: caller.visitorId, twinId: caller.twinId };
  return { id: caller.userId, twinId: caller.launchScope?.twinId };
}
