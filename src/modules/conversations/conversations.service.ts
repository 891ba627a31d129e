// The two transports of a turn: Socket.IO (the JSON answer, chunks as RECEIVE_STREAM to the socket
// named in requestArgs.socketId on whichever process holds it) and SSE (frames on the response).
// Both bind a TurnSink to runTurn; cancels come from cancel_request (any process) or a closed request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../platform/http/actor.js';
import { AppError } from '../../platform/http/errors.js';
import { openSse, type SseStream } from '../../platform/realtime/sse.js';
import type { QandaAnswer, QandaBody, QandaStreamBody } from './conversations.schemas.js';
import { runTurn, type TurnDeps } from './run-turn.js';
import type { StreamRouter } from './socket-events.js';
import { sseFrames } from './sse-frames.js';

export interface ConversationDeps extends TurnDeps {
  streams: StreamRouter;
  /** SSE heartbeat interval (default 15 s). */
  heartbeatMs?: number;
}

/** 502 MODEL_FAILED: the provider failed; nothing was charged and the record is marked failed. */
export class ModelFailedError extends AppError {
  constructor(message: string, historyId: string) {
    super(502, message, 'MODEL_FAILED', { historyId });
  }
}

export function createConversationService(deps: ConversationDeps) {
  const { streams } = deps;
  return {
    async qanda(actor: Actor, body: QandaBody): Promise<QandaAnswer> {
      const args = body.requestArgs ?? {};
      const socketId = args.socketId;
      // A socket that no process holds for this person: the client must reconnect (spec, Events rule 3).
      if (socketId && !(await streams.isLive(socketId, actor.userId))) return { success: true, streamingFailed: true };
      const controller = new AbortController();
      const off = streams.onCancel({ userId: actor.userId, socketId }, () => controller.abort());
      if (socketId) streams.beginAnswer(socketId);
      try {
        const result = await runTurn(
            deps,
            { kind: 'person', actor },
            { inputs: body.inputs, assistantId: args.assistantId, conversationId: args.conversationId, selectedCourse: args.selectedCourse },
            {
              signal: controller.signal,
              onDelta: (delta, prompt) => {
                if (socketId) streams.emitChunk(socketId, { prompt, delta, type: 'STREAM' });
              },
              onTool: () => {},
            },
          );
        if (result.failed) throw new ModelFailedError(result.failed.message, result.historyId);
        return {
          success: true,
          answer: result.answer,
          outputs: [result.answer],
          usage: result.usage,
          credits: result.credits,
          historyId: result.historyId,
          conversationId: result.conversationId,
          cancelled: result.cancelled,
        };
      } finally {
        off();
        if (socketId) streams.endAnswer(socketId);
      }
    },

    /**
     * Refusals before the model is called (400, 402, 403, 429) answer as JSON with their status; once
     * the turn starts the response becomes the event stream: connected, stream/tool frames, then
     * complete or error, then done. Closing the request cancels the turn (the partial is charged).
     */
    async qandaStream(actor: Actor, body: QandaStreamBody, request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const args = body.requestArgs ?? { ragOnly: false };
      const controller = new AbortController();
      let sse: SseStream | undefined;
      // The client leaving (before or during the stream) cancels the turn.
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      let result;
      try {
        result = await runTurn(
          deps,
          { kind: 'person', actor },
          { inputs: body.inputs, assistantId: args.assistant_id, conversationId: args.conversationId, ragOnly: args.ragOnly, selectedCourse: args.selectedCourse },
          {
            signal: controller.signal,
            onStart: () => {
              sse = openSse(request, reply, { heartbeatMs: deps.heartbeatMs, first: sseFrames.connected() });
            },
            onDelta: (delta) => sse?.send(sseFrames.stream(delta)),
            onTool: (name, status) => sse?.send(sseFrames.tool(name, status)),
          },
        );
      } catch (error) {
        // Before the stream opened, the error handler answers with the status; after, only a frame can.
        if (!sse) throw error;
        request.log.error({ err: error }, 'conversation turn failed');
        sse.send(sseFrames.error('Something went wrong'));
        sse.send(sseFrames.done());
        sse.close();
        return;
      }
      if (!sse) return;
      if (result.failed) sse.send(sseFrames.error(result.failed.message, 'MODEL_FAILED'));
      else if (!result.cancelled) {
        sse.send(
          sseFrames.complete({
            usage: result.usage.totalTokens,
            outputs: [result.answer],
            credits: result.credits,
            historyId: result.historyId,
            conversationId: result.conversationId,
          }),
        );
      }
      sse.send(sseFrames.done());
      sse.close();
    },
  };
}

export type ConversationService = ReturnType<typeof createConversationService>;
