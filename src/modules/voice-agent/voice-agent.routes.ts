// POST /api/ai/rt/voice-agent/tool and /ended: called by the external voice agent, not by a person.
// No session: each call is signed (voice-agent.signature.ts), checked before the body is validated or
// anything is read. The JSON parser of this scope keeps the raw body, which the signature covers.
import type { FastifyRequest } from 'fastify';
import { AppError, BadRequestError, UnauthorizedError } from '../../platform/http/errors.js';
import { failures, type App } from '../../platform/http/schemas.js';
import type { Database } from '../../platform/db/client.js';
import { claimSignature, parseSignature, SIGNATURE_HEADER, signatureMatches } from './voice-agent.signature.js';
import { endedAnswer, endedBody, toolAnswer, toolBody } from './voice-agent.schemas.js';
import { VOICE_AGENT_MESSAGES, type VoiceAgentService } from './voice-agent.service.js';

const SIGNED =
  'Signed by the voice agent: header X-Twin-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with VOICE_AGENT_SECRET>. ' +
  'A signature that is missing, wrong, more than 5 minutes from now or used before answers 401 BAD_SIGNATURE; without VOICE_AGENT_SECRET every call answers 503 VOICE_AGENT_NOT_CONFIGURED. ' +
  "404 VOICE_AGENT_NOT_FOUND when no active twin's branding has this voice_agent_id.";

export function voiceAgentRoutes(app: App, deps: { db: Database; secret?: string; service: VoiceAgentService }): void {
  const rawBodies = new WeakMap<FastifyRequest, string>();
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    rawBodies.set(request, text);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new BadRequestError('Body is not valid JSON', 'INVALID_JSON'), undefined);
    }
  });

  app.addHook('preValidation', async (request) => {
    if (!deps.secret) throw new AppError(503, VOICE_AGENT_MESSAGES.notConfigured, 'VOICE_AGENT_NOT_CONFIGURED');
    const parts = parseSignature(request.headers[SIGNATURE_HEADER]);
    const good =
      parts !== undefined &&
      signatureMatches(deps.secret, parts, rawBodies.get(request) ?? '', Math.floor(Date.now() / 1000)) &&
      (await claimSignature(deps.db, parts));
    if (!good) throw new UnauthorizedError(VOICE_AGENT_MESSAGES.badSignature, 'BAD_SIGNATURE');
  });

  app.post(
    '/api/ai/rt/voice-agent/tool',
    {
      schema: {
        tags: ['voice'],
        summary: "Run a tool for a voice agent's live call",
        description:
          'Runs one of the twin\'s tools for a person on a call, exactly as a chat turn would: the same tools (the twin\'s toolsDisabled applied), and when the tool\'s server requires approval, ' +
          "an approval card in every tab of the person (TOOL_APPROVAL). The request is held until the decision, at most 45 seconds (or APPROVAL_TIMEOUT_MS when shorter): " +
          '{success: true, result} when the tool ran; {success: false, code: DECLINED | EXPIRED | CANCELLED} (status 200) when it did not. ' +
          'approve_conversation covers later calls of that tool in the same callId. The call is cancelled when /ended names it or the request is dropped; ' +
          'a request for a call /ended already named answers 409 CALL_ENDED and nothing runs. ' +
          `${SIGNED} 404 USER_NOT_FOUND when userId is not a member of that twin, TOOL_NOT_FOUND when the twin offers no such tool; 502 TOOL_FAILED when its server cannot be reached.`,
        body: toolBody,
        response: { 200: toolAnswer, ...failures(400, 401, 404, 409, 502, 503) },
      },
      config: { auth: 'none' },
    },
    async (request, reply) => {
      const dropped = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) dropped.abort();
      };
      reply.raw.on('close', onClose);
      try {
        return await deps.service.runTool({ ...request.body, arguments: request.body.arguments ?? {} }, dropped.signal);
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  );

  app.post(
    '/api/ai/rt/voice-agent/ended',
    {
      schema: {
        tags: ['voice'],
        summary: "A voice agent's call ended",
        description: `Cancels every tool request of that call still waiting for a decision, on any process: each answers {success: false, code: "CANCELLED"} and its tool does not run. A tool request for the call after this answers 409 CALL_ENDED and does not run (for a day after the end). ${SIGNED}`,
        body: endedBody,
        response: { 200: endedAnswer, ...failures(400, 401, 404, 503) },
      },
      config: { auth: 'none' },
    },
    async (request) => {
      await deps.service.ended(request.body);
      return { success: true as const };
    },
  );
}
