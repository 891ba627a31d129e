// The two transports of a turn: Socket.IO (the JSON answer, chunks as RECEIVE_STREAM to the socket
// named in requestArgs.socketId; the turn runs on the process holding that socket: turn-handoff.ts) and
// SSE (frames on the response). Both bind a TurnSink to runTurn; cancels come from cancel_request (any
// process) or a closed request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import { isVisitor, type Caller } from '../../platform/http/actor.js';
import { AppError } from '../../platform/http/errors.js';
import { openSse, type SseStream } from '../../platform/realtime/sse.js';
import type { PersonTabs } from '../../platform/realtime/person-tabs.js';
import type { QandaAnswer, QandaBody, QandaStreamBody } from './conversations.schemas.js';
import { runTurn } from './run-turn.js';
import type { TurnDeps } from './turn-deps.js';
import type { TurnCaller } from './turn-types.js';
import type { StreamRouter } from './socket-events.js';
import { sseFrames } from './sse-frames.js';
import type { TurnHandoff, TurnOutcome } from './turn-handoff.js';

export interface ConversationDeps extends TurnDeps {
  /** Told of each turn's charge (turn-end.ts); caught up with before answering for a turn run elsewhere. */
  changes: Pick<ChangeFeed, 'committed' | 'catchUp'>;
  streams: StreamRouter;
  /** Has another process run a turn whose socket it holds. */
  handoff: Pick<TurnHandoff, 'delegate'>;
  /** SSE heartbeat interval (SSE_HEARTBEAT_MS). */
  heartbeatMs: number;
  /** A turn's SSE stream is one of the person's tabs while open (approval cards reach it). */
  tabs: Pick<PersonTabs, 'attachSse'>;
}

/** Socket.IO event of a tool call's progress (the SSE `tool` frame's twin). */
export const TOOL_STATUS_EVENT = 'TOOL_STATUS';

/** 502 MODEL_FAILED: the provider failed; nothing was charged and the record is marked failed. */
export class ModelFailedError extends AppError {
  constructor(message: string, historyId: string) {
    super(502, message, 'MODEL_FAILED', { historyId });
  }
}

export function createConversationService(deps: ConversationDeps) {
  const { streams } = deps;

  /** A Socket.IO turn on this process: its pieces go to the socket, if named, which this process holds. */
  async function answerHere(caller: Caller, body: QandaBody, signal?: AbortSignal): Promise<TurnOutcome> {
    const args = body.requestArgs ?? {};
    const socketId = args.socketId;
    const controller = new AbortController();
    const target = isVisitor(caller)
      ? { userId: caller.visitorId, socketId, twinId: caller.twinId }
      : { userId: caller.userId, socketId, twinId: caller.launchScope?.twinId ?? caller.twinId };
    const off = streams.onCancel(target, () => controller.abort());
    const offAbort = forwardAbort(signal, controller);
    if (socketId) streams.beginAnswer(socketId);
    try {
      const result = await runTurn(
        deps,
        turnCallerOf(caller),
        { inputs: body.inputs, assistantId: args.assistantId, conversationId: args.conversationId, selectedCourse: args.selectedCourse },
        {
          signal: controller.signal,
          onDelta: (delta, prompt) => {
            if (socketId) streams.emitChunk(socketId, { prompt, delta, type: 'STREAM' });
          },
          onTool: (name, status) => {
            if (socketId) streams.emitEvent(socketId, TOOL_STATUS_EVENT, { name, status });
          },
        },
      );
      if (result.failed) throw new ModelFailedError(result.failed.message, result.historyId);
      const answer: QandaAnswer = {
        success: true,
        answer: result.answer,
        outputs: [result.answer],
        usage: result.usage,
        credits: result.credits,
        historyId: result.historyId,
        conversationId: result.conversationId,
        cancelled: result.cancelled,
      };
      return { answer };
    } finally {
      off();
      offAbort();
      if (socketId) streams.endAnswer(socketId);
    }
  }

  return {
    answerHere,

    async qanda(caller: Caller, body: QandaBody): Promise<QandaAnswer> {
      const socketId = body.requestArgs?.socketId;
      if (!socketId) return (await answerHere(caller, body)).answer;
      // A visitor holds no socket (sockets are people's): its answers come as JSON or over SSE.
      if (isVisitor(caller)) return { success: true, streamingFailed: true };
      const actor = caller;
      if (streams.holds(socketId, actor.userId)) return (await answerHere(actor, body)).answer;
      // The socket is held elsewhere: the turn runs there, so its pieces never cross processes.
      const handed = await deps.handoff.delegate({ actor, body, socketId });
      // A socket that no process holds for this person: the client must reconnect (spec, Events rule 3).
      if (handed.kind === 'not-held') return { success: true, streamingFailed: true };
      // The turn's charge committed before its answer was sent: once this process has heard every change
      // committed until now, its caches cannot show the client the balance as it was before the turn.
      await deps.changes.catchUp();
      return handed.outcome.answer;
    },

    /**
     * Refusals before the model is called (400, 402, 403, 429) answer as JSON with their status; once
     * the turn starts the response becomes the event stream: connected, stream/tool frames, then
     * complete or error, then done. Closing the request cancels the turn (the partial is charged).
     */
    async qandaStream(caller: Caller, body: QandaStreamBody, request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const args = body.requestArgs ?? { ragOnly: false };
      const controller = new AbortController();
      let sse: SseStream | undefined;
      let detach = () => {};
      // The client leaving (before or during the stream) cancels the turn.
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      let result;
      try {
        result = await runTurn(
          deps,
          turnCallerOf(caller),
          { inputs: body.inputs, assistantId: args.assistant_id, conversationId: args.conversationId, ragOnly: args.ragOnly, selectedCourse: args.selectedCourse },
          {
            signal: controller.signal,
            onStart: () => {
              sse = openSse(request, reply, { heartbeatMs: deps.heartbeatMs, first: sseFrames.connected() });
              // A person's stream is one of their tabs (approval cards reach it); a visitor has no tabs.
              if (!isVisitor(caller)) detach = deps.tabs.attachSse(caller.userId, sse, caller.launchScope?.twinId);
            },
            onDelta: (delta) => sse?.send(sseFrames.stream(delta)),
            onTool: (name, status) => sse?.send(sseFrames.tool(name, status)),
          },
        );
      } catch (error) {
        detach();
        // Before the stream opened, the error handler answers with the status; after, only a frame can: a
        // refusal (a 4xx, such as a turn whose context its balance cannot hold) says why, anything else not.
        if (!sse) throw error;
        if (error instanceof AppError && error.status < 500) sse.send(sseFrames.error(error.message, error.code));
        else {
          request.log.error({ err: error }, 'conversation turn failed');
          sse.send(sseFrames.error('Something went wrong'));
        }
        sse.send(sseFrames.done());
        sse.close();
        return;
      }
      detach();
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

/** Who the turn runs for: the person, or the visitor of the twin its session is bound to. */
function turnCallerOf(caller: Caller): TurnCaller {
  return isVisitor(caller) ? { kind: 'visitor', twinId: caller.twinId, visitorId: caller.visitorId, sessionId: caller.sessionId } : { kind: 'person', actor: caller };
}

/** Aborts controller when signal does; returns the function that stops listening. */
function forwardAbort(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => {};
  if (signal.aborted) controller.abort();
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort, { once: true });
  return () => signal.removeEventListener('abort', abort);
}
