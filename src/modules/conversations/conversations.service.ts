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
import type { SseFrame } from '../../platform/realtime/client-frames.js';
import type { AnswerLog } from '../../platform/realtime/open-stream-log.js';
import { AnswerFrames, endFrames, socketEventOf, sseTextOf } from './answer-frames.js';
import type { AnswerControl } from './answer-control.js';
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
  /** Every answer's frames, numbered, for resumes (answer-frames.ts). */
  streamLog: AnswerLog;
  /** Cancels and resumed readers of running answers, from any process. */
  control: Pick<AnswerControl, 'register'>;
  /** RESUME_GRACE_SECONDS: how long a resumable answer goes on with nobody reading it. */
  resumeGraceSeconds: number;
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

  /**
   * A Socket.IO turn on this process: its frames go to the socket, if named, which this process holds.
   * `onStarted` hears the answer's record once it exists.
   */
  async function answerHere(caller: Caller, body: QandaBody, signal?: AbortSignal, onStarted?: (historyId: string) => void): Promise<TurnOutcome> {
    const args = body.requestArgs ?? {};
    const socketId = args.socketId;
    const controller = new AbortController();
    const target = isVisitor(caller)
      ? { userId: caller.visitorId, socketId, twinId: caller.twinId }
      : { userId: caller.userId, socketId, twinId: caller.launchScope?.twinId ?? caller.twinId };
    const off = streams.onCancel(target, () => controller.abort());
    const offAbort = forwardAbort(signal, controller);
    let frames: AnswerFrames | undefined;
    let forget = () => {};
    let text = '';
    const emit = (frame: SseFrame): void => {
      if (!frames) return;
      const seq = frames.number(frame);
      const event = socketId ? socketEventOf(frame, seq, frames.historyId, text) : undefined;
      if (!socketId || !event) return;
      if (event[0] === 'RECEIVE_STREAM') streams.emitChunk(socketId, event[1]);
      else streams.emitEvent(socketId, ...event);
    };
    if (socketId) streams.beginAnswer(socketId);
    try {
      const result = await runTurn(
        deps,
        turnCallerOf(caller),
        { inputs: body.inputs, assistantId: args.assistantId, conversationId: args.conversationId, selectedCourse: args.selectedCourse },
        {
          signal: controller.signal,
          onStart: ({ historyId, conversationId }) => {
            frames = new AnswerFrames(deps.streamLog, historyId);
            forget = deps.control.register(historyId, { cancel: () => controller.abort() });
            emit(sseFrames.started(historyId, conversationId));
            onStarted?.(historyId);
          },
          onDelta: (delta, prompt) => {
            text = prompt;
            emit(sseFrames.stream(delta));
          },
          onTool: (name, status) => emit(sseFrames.tool(name, status)),
          // Numbered and logged only: the person's tabs carry the card to this socket (it is in the person's room).
          onApproval: (frame) => (frames && !frames.isEnded ? frames.next(frame).seq : undefined),
        },
      );
      for (const frame of endFrames(result)) emit(frame);
      emit(sseFrames.done());
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
    } catch (error) {
      // A failure after the answer started: its readers hear why, then done.
      if (frames && !frames.isEnded && !(error instanceof ModelFailedError)) {
        emit(failureFrame(error));
        emit(sseFrames.done());
      }
      throw error;
    } finally {
      frames?.end();
      forget();
      off();
      offAbort();
      if (socketId) streams.endAnswer(socketId);
    }
  }

  /**
   * A Socket.IO turn whose socket no process holds: it runs here with no socket, and the client is told
   * its record (streamingFailed with historyId) as soon as it exists, to follow it by a resume.
   */
  function answerDetached(caller: Caller, body: QandaBody): Promise<QandaAnswer> {
    const detached: QandaBody = { ...body, requestArgs: { ...body.requestArgs, socketId: undefined } };
    return new Promise<QandaAnswer>((resolve, reject) => {
      let started = false;
      answerHere(caller, detached, undefined, (historyId) => {
        started = true;
        resolve({ success: true, streamingFailed: true, historyId });
      }).catch((error: unknown) => {
        if (!started) reject(error);
        // After the start the failure is in the answer's frames and on its record.
      });
    });
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
      if (handed.kind === 'not-held') return answerDetached(actor, body);
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
      let frames: AnswerFrames | undefined;
      let detach = () => {};
      let forget = () => {};
      const grace = resumeGrace(args.resumable === true ? deps.resumeGraceSeconds : undefined, () => controller.abort());
      // The client leaving cancels the turn; a resumable answer that started waits for a resume first.
      reply.raw.once('close', () => {
        if (reply.raw.writableFinished) return;
        if (frames) grace.requesterLeft();
        else controller.abort();
      });
      const send = (frame: SseFrame): void => {
        if (!frames) return;
        const text = frames.sseText(frame);
        if (sse) sse.sendText(text);
      };
      let result;
      try {
        result = await runTurn(
          deps,
          turnCallerOf(caller),
          { inputs: body.inputs, assistantId: args.assistant_id, conversationId: args.conversationId, ragOnly: args.ragOnly, selectedCourse: args.selectedCourse },
          {
            signal: controller.signal,
            onStart: ({ historyId, conversationId }) => {
              sse = openSse(request, reply, { heartbeatMs: deps.heartbeatMs, first: sseFrames.connected() });
              frames = new AnswerFrames(deps.streamLog, historyId);
              forget = deps.control.register(historyId, { cancel: () => controller.abort(), readers: (change) => grace.readers(change) });
              // A person's stream is one of their tabs (approval cards reach it); a visitor has no tabs.
              // Its own answer's numbered frames reach it from the answer, in order, not through the tabs.
              if (!isVisitor(caller)) detach = deps.tabs.attachSse(caller.userId, sse, caller.launchScope?.twinId, historyId);
              send(sseFrames.started(historyId, conversationId));
            },
            onDelta: (delta) => send(sseFrames.stream(delta)),
            onTool: (name, status) => send(sseFrames.tool(name, status)),
            onApproval: (frame) => {
              if (!frames || frames.isEnded) return undefined;
              const numbered = frames.next(frame);
              if (sse) sse.sendText(sseTextOf(numbered));
              return numbered.seq;
            },
          },
        );
      } catch (error) {
        detach();
        // Before the stream opened, the error handler answers with the status; after, only a frame can: a
        // refusal (a 4xx, such as a turn whose context its balance cannot hold) says why, anything else not.
        if (!sse) throw error;
        if (!(error instanceof AppError && error.status < 500)) request.log.error({ err: error }, 'conversation turn failed');
        send(failureFrame(error));
        send(sseFrames.done());
        finish();
        return;
      }
      detach();
      if (!sse) return;
      for (const frame of endFrames(result)) send(frame);
      send(sseFrames.done());
      finish();

      function finish(): void {
        grace.clear();
        frames?.end();
        forget();
        sse?.close();
      }
    },
  };
}

export type ConversationService = ReturnType<typeof createConversationService>;

/** Who the turn runs for: the person, or the visitor of the twin its session is bound to. */
function turnCallerOf(caller: Caller): TurnCaller {
  return isVisitor(caller) ? { kind: 'visitor', twinId: caller.twinId, visitorId: caller.visitorId, sessionId: caller.sessionId } : { kind: 'person', actor: caller };
}

/** The frame a failure after the start ends an answer with: a refusal says why, anything else not. */
function failureFrame(error: unknown): SseFrame {
  return error instanceof AppError && error.status < 500 ? sseFrames.error(error.message, error.code) : sseFrames.error('Something went wrong');
}

/**
 * A resumable answer's wait for a reader: once its requester left, it goes on while readers that resumed
 * it (any process) follow, and `graceSeconds` with none; then `cancel`. Without graceSeconds (not
 * resumable) the requester leaving cancels at once.
 */
function resumeGrace(graceSeconds: number | undefined, cancel: () => void) {
  let readers = 0;
  let requesterGone = false;
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    if (!requesterGone || readers > 0) {
      clearTimeout(timer);
      timer = undefined;
      return;
    }
    timer ??= setTimeout(cancel, (graceSeconds ?? 0) * 1000);
  };
  return {
    requesterLeft(): void {
      requesterGone = true;
      if (graceSeconds === undefined) cancel();
      else check();
    },
    readers(change: 1 | -1): void {
      readers = Math.max(0, readers + change);
      check();
    },
    clear(): void {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** Aborts controller when signal does; returns the function that stops listening. */
function forwardAbort(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => {};
  if (signal.aborted) controller.abort();
  const abort = () => controller.abort();
  signal.addEventListener('abort', abort, { once: true });
  return () => signal.removeEventListener('abort', abort);
}
