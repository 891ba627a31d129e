// Resuming an answer (contract: resumable answers): the frames after a seq replayed from the process's
// frame log, then followed live to the end, whichever process produces them; over SSE
// (GET /api/ai/stream/{historyId}) or a socket (RESUME_STREAM). Only the answer's owner; another
// person's answer, or one that never was, is 404. An answer whose frames are no longer kept (ended more
// than STREAM_RETENTION_SECONDS ago) is 410 STREAM_EXPIRED. An answer cut short by its process's death
// ends with the INTERRUPTED error and done, also when the log never knew it (the embedded shape restarted).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../platform/db/client.js';
import { AppError, NotFoundError } from '../../platform/http/errors.js';
import { sseTextOfStored, type AnswerLog } from '../../platform/realtime/open-stream-log.js';
import { openSse } from '../../platform/realtime/sse.js';
import type { SseFrame } from '../../platform/realtime/client-frames.js';
import { decodeLogged, type EncodedFrame, type Following } from '../../platform/realtime/stream-log.js';
import { findHistory } from '../history/history.repo.js';
import type { HistoryRow } from '../history/history.tables.js';
import type { AnswerControl } from './answer-control.js';
import { socketEmitOf, type NumberedFrame } from './answer-frames.js';
import type { StreamRouter } from './socket-events.js';
import { INTERRUPTED_TURN_ERROR, interruptedFrames } from './turn-holds.js';

export const ANSWER_NOT_FOUND = 'Answer not found';

/** 410 STREAM_EXPIRED: the answer's frames are no longer kept; its record (GET /api/user/history/{id}) has the answer. */
export class StreamExpiredError extends AppError {
  constructor() {
    super(410, 'The frames of this answer are no longer kept; read the answer from its history record', 'STREAM_EXPIRED');
  }
}


export interface ResumeDeps {
  db: Database;
  streamLog: AnswerLog;
  control: Pick<AnswerControl, 'reading' | 'cancel'>;
  streams: Pick<StreamRouter, 'emitEvent'>;
  /** SSE_HEARTBEAT_MS. */
  heartbeatMs: number;
}

/** How often a resume looks again for an answer its log does not know yet. */
const UNKNOWN_RETRY_MS = 200;
/**
 * A short answer can end (its record settled, `done` sent) before its first frames reach the log: the
 * log writes first frames and ends together within 20 ms. A resume of an answer that ended this
 * recently, finding nothing logged, waits for the log as for a running one rather than answering 410.
 */
const JUST_ENDED_MS = 5_000;
/** How long a resume waits for the frames of an answer that just ended. */
const JUST_ENDED_WAIT_MS = 1_000;
/**
 * How long a resume waits for the frames of an answer still running: its producer writes them within
 * 20 ms, later when its process or the log's Redis is overloaded. If the producer died meanwhile, the
 * sweep of interrupted turns ends the record within this time (contract: INTERRUPTED within 30 seconds),
 * and the resume then answers INTERRUPTED; a running answer is never called interrupted for a slow log.
 */
const RUNNING_WAIT_MS = 30_000;

/** Ended so recently that its frames may not have reached the log yet. */
function justEnded(record: HistoryRow | undefined): boolean {
  return record?.completedAt != null && Date.now() - record.completedAt.getTime() < JUST_ENDED_MS;
}

/** Whose answers a caller may reach: a person's or a visitor's own; `twinId` confines them to one twin (a launch session, a visitor). */
export interface AnswerOwner {
  id: string;
  twinId?: string;
}

export function createAnswerResume(deps: ResumeDeps) {
  const { db, streamLog } = deps;

  /** The caller's answer record, else 404 (an answer of another twin too, for a caller confined to one). */
  async function ownAnswer(owner: AnswerOwner, historyId: string): Promise<HistoryRow> {
    const record = await findHistory(db, historyId);
    if (!record || record.userId !== owner.id || (owner.twinId && record.twinId !== owner.twinId)) throw new NotFoundError(ANSWER_NOT_FOUND, 'NOT_FOUND');
    return record;
  }

  /**
   * Follows the answer from afterSeq: `onFrames` gets each frame once (its stored text), in order, to
   * the end; the replay in one call. Throws STREAM_EXPIRED when its frames are gone; answers the
   * following (to stop it), or null when the answer's end was already delivered.
   */
  async function follow(record: HistoryRow, afterSeq: number, onFrames: (frames: EncodedFrame[]) => void, signal?: AbortSignal): Promise<Following | null> {
    const historyId = record.id;
    const since = Date.now();
    for (;;) {
      const result = await streamLog.followText(historyId, afterSeq, onFrames);
      if (result.kind === 'following') return result;
      if (result.kind !== 'unknown') throw new StreamExpiredError();
      const now = await findHistory(db, historyId);
      // The reader left while the resume waited: there is no one to answer.
      if (signal?.aborted) return null;
      const waitFor = now?.status === 'streaming' ? RUNNING_WAIT_MS : justEnded(now) ? JUST_ENDED_WAIT_MS : 0;
      if (Date.now() - since < waitFor) {
        await new Promise((resolve) => setTimeout(resolve, UNKNOWN_RETRY_MS));
        continue;
      }
      // Never logged, or forgotten: an answer cut short by its process's death still ends as it would have.
      if (now?.status === 'streaming' || now?.error === INTERRUPTED_TURN_ERROR) {
        onFrames(interruptedFrames().map((frame, i) => ({ seq: afterSeq + i + 1, json: JSON.stringify(frame) })));
        return null;
      }
      throw new StreamExpiredError();
    }
  }

  return {
    /** GET /api/ai/stream/{historyId}: the frames after `afterSeq` as SSE, then live to done. */
    async resumeSse(owner: AnswerOwner, historyId: string, afterSeq: number, request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const record = await ownAnswer(owner, historyId);
      // The stored texts go out as they are (no decoding and encoding again), each batch in one write.
      // Frames may arrive before follow() answers (its replay): they wait until the stream is open.
      let early = '';
      let sse: ReturnType<typeof openSse> | undefined;
      // A reader that leaves while the resume waits for the log stops the wait.
      const gone = new AbortController();
      const leaving = () => gone.abort();
      reply.raw.once('close', leaving);
      const following = await follow(
        record,
        afterSeq,
        (frames) => {
          const text = sseText(historyId, frames);
          if (!sse) early += text;
          else if (!sse.closed && !reply.raw.destroyed) reply.raw.write(text);
        },
        gone.signal,
      ).finally(() => reply.raw.off('close', leaving));
      // Gone while the resume waited: nothing to open, and nothing for Fastify to send.
      if (gone.signal.aborted) return void reply.hijack();
      sse = openSse(request, reply, { heartbeatMs: deps.heartbeatMs });
      if (early) reply.raw.write(early);
      if (!following) return sse.close();
      const leave = deps.control.reading(historyId);
      sse.signal.addEventListener('abort', () => following.stop(), { once: true });
      await following.done;
      leave();
      sse.close();
    },

    /** RESUME_STREAM on a socket: the same frames as its events (RECEIVE_STREAM with the whole text so far). */
    async resumeSocket(owner: AnswerOwner, socketId: string, historyId: string, afterSeq: number, signal: AbortSignal): Promise<void> {
      const record = await ownAnswer(owner, historyId);
      // The socket's RECEIVE_STREAM carries the text so far: read from the start, send after afterSeq.
      let text = '';
      const following = await follow(
        record,
        0,
        (frames) => {
          for (const { seq, frame: stored } of decodeLogged<SseFrame>(frames)) {
            const frame = { ...stored, seq, historyId } as NumberedFrame;
            if (frame.type === 'stream') text += frame.delta;
            if (seq <= afterSeq) continue;
            const event = socketEmitOf(frame, text);
            if (event) deps.streams.emitEvent(socketId, ...event);
          }
        },
        signal,
      );
      if (!following) return;
      if (signal.aborted) return following.stop();
      const leave = deps.control.reading(historyId);
      signal.addEventListener('abort', () => following.stop(), { once: true });
      await following.done;
      leave();
    },

    /** POST /api/ai/stream/{historyId}/cancel: stops the answer on whichever process produces it. */
    async cancel(owner: AnswerOwner, historyId: string): Promise<{ success: true; cancelled: boolean }> {
      const record = await ownAnswer(owner, historyId);
      if (record.status !== 'streaming') return { success: true, cancelled: false };
      await deps.control.cancel(historyId);
      return { success: true, cancelled: true };
    },
  };
}

export type AnswerResume = ReturnType<typeof createAnswerResume>;

/** Stored frames as the SSE text the live stream sent (sseTextOfStored), without decoding them. */
export function sseText(historyId: string, frames: EncodedFrame[]): string {
  let text = '';
  for (const { seq, json } of frames) text += sseTextOfStored(historyId, seq, json);
  return text;
}

/** `Last-Event-ID: <historyId>:<seq>` (it wins) or `after=<seq>`; 0 (from the start) without either. */
export function afterSeqOf(historyId: string, lastEventId: string | undefined, after: number | undefined): number {
  if (lastEventId === undefined || lastEventId === '') return after ?? 0;
  const match = /^([0-9a-f]{24}):(\d{1,9})$/i.exec(lastEventId.trim());
  if (!match || match[1] !== historyId) throw new AppError(400, 'Last-Event-ID must be <historyId>:<seq> of this answer', 'INVALID_LAST_EVENT_ID');
  return Number(match[2]);
}
