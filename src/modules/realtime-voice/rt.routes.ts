// POST /api/ai/rt/session and POST /api/ai/rt/session/{id}/end: a signed-in person opens a real-time
// voice session of their current twin, and ends it from any tab or process.
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, type App } from '../../platform/http/schemas.js';
import type { RtSessionService } from './rt-session.service.js';
import { endAnswer, sessionAnswer, sessionBody } from './rt.schemas.js';

export function rtRoutes(app: App, service: RtSessionService): void {
  app.post(
    '/api/ai/rt/session',
    {
      schema: {
        tags: ['ai'],
        summary: 'Open a real-time voice session',
        description:
          'Opens a voice session of the current twin and answers a one-use token (60 seconds) for the relay `url` (a WebSocket speaking the OpenAI Realtime ' +
          "event protocol, GA names). The service sets the session's instructions (the assistant's, the twin's guardrails when on, memories when on), voice " +
          'and tools, runs tool calls itself behind approval cards (45 seconds), writes each exchange to history (mode "voice") and charges the usage at ' +
          'RT_PRICE_*. Caps and credits as a chat turn: 429 USAGE_LIMIT_REACHED, 402 INSUFFICIENT_CREDITS. 403 RT_DISABLED (rtEnabled off), 403 RT_ADMIN_ONLY ' +
          '(rtAdminOnly, the caller not an admin of the twin), 503 RT_NOT_CONFIGURED (no REALTIME_BASE_URL).',
        body: sessionBody,
        response: { 200: sessionAnswer, ...failures(400, 401, 402, 403, 404, 429, 503) },
      },
    },
    async (request) => ({ success: true as const, ...(await service.open(actorOf(request), request.body ?? {})) }),
  );

  app.post(
    '/api/ai/rt/session/:id/end',
    {
      schema: {
        tags: ['ai'],
        summary: 'End a real-time voice session',
        description:
          "Ends the caller's session wherever its call runs: a tool call waiting for approval is cancelled and does not run, the exchange under way is " +
          'written and charged, the relay closes with code 4000 ENDED. Ending an ended session succeeds; another person\'s or twin\'s session answers 404.',
        params: idParams,
        response: { 200: endAnswer, ...failures(400, 401, 404) },
      },
    },
    async (request) => {
      await service.end(actorOf(request), request.params.id);
      return { success: true as const };
    },
  );
}
