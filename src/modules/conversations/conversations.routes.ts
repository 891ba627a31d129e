// /api/ai/personal/qanda (Socket.IO streaming) and /api/ai/personal-stream/qanda-stream (SSE): a
// conversation turn as the spec describes it; the work is runTurn's, the transports the service's.
import { callerOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { qandaAnswer, qandaBody, qandaStreamBody } from './conversations.schemas.js';
import type { ConversationService } from './conversations.service.js';

const REFUSALS =
  'Before the model is called a turn is refused, and nothing is charged, when: the question (last input) is empty (400 QUESTION_REQUIRED); ' +
  'the person has no current twin (400 NO_CURRENT_TWIN); the twin is inactive (403 INSTITUTION_INACTIVE); a daily cap of the last 24 hours ' +
  '(per person or for the whole twin) is used up (429 USAGE_LIMIT_REACHED); or the paying balance (the twin pool when it pools credits, else ' +
  "the person's) is empty for a priced model (402 INSUFFICIENT_CREDITS). An assistant the person could not pick, or a deleted one, runs as New Conversation. " +
  "A visitor of an embedded twin asks in the twin its session is bound to, runs New Conversation, and is paid for by the twin's pool; the per-person cap counts each visitor session on its own. " +
  'Credits are charged for real usage (a cancelled turn pays for its partial answer, a failed one nothing), never more than the balance holds.';

export function conversationRoutes(app: App, service: ConversationService): void {
  app.post(
    '/api/ai/personal/qanda',
    {
      // The turn's settle tells the change feed of the balance it charged (turn-end.ts).
      // A visitor of an embedded twin asks too (answered as JSON: a visitor holds no socket).
      config: { changesTold: true, visitors: true },
      schema: {
        tags: ['conversations'],
        summary: 'Ask a question; the answer streams to a socket',
        description:
          'Chunks go to requestArgs.socketId as RECEIVE_STREAM {prompt (whole text so far), delta, type: "STREAM"}. The turn runs on the process holding that socket, whichever process this request reached. ' +
          'cancel_request ends the turn gracefully (the answer so far is returned, recorded and charged); cancel_streaming stops only the chunks of this answer. ' +
          'Each answer on the socket opens with STREAM_STARTED {historyId, conversationId, seq} and ends with STREAM_COMPLETE (or STREAM_ERROR) then STREAM_DONE; every payload carries seq and historyId (RESUME_STREAM {historyId, afterSeq} replays and follows an answer on a socket). ' +
          'When the socket is not held by any process for this person the turn runs on this process without a socket and the answer is {success: true, streamingFailed: true, historyId} as soon as it started: follow it with GET /api/ai/stream/{historyId} or RESUME_STREAM. ' +
          'Without a socketId the turn runs and only the JSON answer is given. The answer: {success, answer, outputs: [answer], usage {inputTokens, outputTokens, totalTokens}, credits, historyId, conversationId, cancelled}. ' +
          `A provider failure answers 502 MODEL_FAILED with the provider's reason; nothing is charged. ` +
          'When the process running the turn for this socket stops without finishing it, 503 TURN_LOST (ask again). ' +
          REFUSALS,
        body: qandaBody,
        response: { 200: qandaAnswer, ...failures(400, 401, 402, 403, 404, 429, 501, 502, 503) },
      },
    },
    async (request) => service.qanda(callerOf(request), request.body),
  );

  app.post(
    '/api/ai/personal-stream/qanda-stream',
    {
      config: { auth: 'bearer', changesTold: true, visitors: true },
      schema: {
        tags: ['conversations'],
        summary: 'Ask a question; the answer streams as Server-Sent Events',
        description:
          'Authorization: Bearer only. Frames `data: <JSON>`: connected {message}, stream {prompt, delta} (the chunk), tool {name, status} (a search of the files shows as name \'retrieval\', started then completed or failed, before the answer), ' +
          'complete {success: true, usage (total tokens), outputs: [answer], credits, historyId, conversationId}, error {error: {message, code: MODEL_FAILED}}, done. ' +
          'After connected, the first frame is started {historyId, conversationId}; every frame after connected carries seq (1, 2, 3...) and historyId, and an `id: <historyId>:<seq>` line (resume with GET /api/ai/stream/{historyId}). ' +
          'Comment heartbeats (": ping") every 15 s (SSE_HEARTBEAT_MS). Closing the request cancels the turn (the partial answer is recorded and charged; no further frames), unless requestArgs.resumable is true: then the answer goes on RESUME_GRACE_SECONDS (30) for a resume, and is cancelled when nobody resumes it. ' +
          `Refusals before the stream opens answer as JSON failure bodies with their status. ${REFUSALS}`,
        body: qandaStreamBody,
        produces: ['text/event-stream'],
        response: { ...failures(400, 401, 402, 403, 404, 429, 501) },
      },
    },
    async (request, reply) => service.qandaStream(callerOf(request), request.body, request, reply),
  );
}
