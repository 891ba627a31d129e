// An answer's frames numbered and logged (contract: resumable answers). The producer numbers each frame
// through the process's frame log (seq 1, 2, 3...: `started` first) and sends it to its own reader itself,
// with `seq` and `historyId`; the log keeps the frame for resumes, written in batches beside the live
// path. Both transports send the same numbered frames: SSE as they are (`id: <historyId>:<seq>`), a
// socket as the events the frame map names (RECEIVE_STREAM with the whole text so far, TOOL_STATUS,
// STREAM_STARTED, STREAM_COMPLETE, STREAM_ERROR, STREAM_DONE, and an approval card as TOOL_APPROVAL and
// its ending as TOOL_APPROVAL_DECIDED).
import type { SocketEmit, SseFrame } from '../../platform/realtime/client-frames.js';
import { sseTextOfStored, storedJsonOf, type AnswerLog } from '../../platform/realtime/open-stream-log.js';
import { sseDataOf, type SseStream } from '../../platform/realtime/sse.js';
import { sseFrames, type Numbering } from './sse-frames.js';
import type { TurnResult } from './turn-types.js';

export type NumberedFrame = SseFrame & Numbering;

/** What a reader that reconnects sends back (Last-Event-ID), and what each SSE frame's `id:` says. */
export const eventIdOf = (frame: Numbering): string => `${frame.historyId}:${frame.seq}`;

/** A numbered frame as its SSE text: `id: <historyId>:<seq>` and the frame's data line. */
export function sseTextOf(frame: NumberedFrame): string {
  return `id: ${eventIdOf(frame)}\n${sseDataOf(frame)}`;
}

/** Writes a numbered frame on an SSE stream, with its event id. */
export function sendNumbered(sse: Pick<SseStream, 'send'>, frame: NumberedFrame): boolean {
  return sse.send(frame, eventIdOf(frame));
}

/** The producer's side of one answer: numbers each frame, logs it, and hands it back to be sent. */
export class AnswerFrames {
  private ended = false;

  constructor(
    private readonly log: AnswerLog,
    readonly historyId: string,
  ) {}

  /** Numbers and logs the frame; answers the numbered copy (an approval card's path). */
  next(frame: SseFrame): NumberedFrame {
    const seq = this.number(frame);
    return { ...frame, seq, historyId: this.historyId };
  }

  /** Numbers and logs the frame; answers its seq (the socket's events are built from it: socketEventOf). */
  number(frame: SseFrame): number {
    return this.log.append(this.historyId, frame);
  }

  /**
   * Numbers and logs the frame; answers its SSE text. The frame is encoded once: the log keeps that text
   * and the SSE text is made from it, as a resume makes it from the stored text.
   */
  sseText(frame: SseFrame): string {
    const json = storedJsonOf(frame);
    return sseTextOfStored(this.historyId, this.log.appendText(this.historyId, json), json);
  }

  /** After `done`: the log writes what is pending with the end. Failures are the log's to report. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.log.end(this.historyId).catch(() => {});
  }

  get isEnded(): boolean {
    return this.ended;
  }
}

/** The frames that end an answer, before `done`: complete, or the failure, or nothing for a cancel. */
export function endFrames(result: TurnResult): SseFrame[] {
  if (result.failed) return [sseFrames.error(result.failed.message, 'MODEL_FAILED')];
  if (result.cancelled) return [];
  return [
    sseFrames.complete({
      usage: result.usage.totalTokens,
      outputs: [result.answer],
      credits: result.credits,
      historyId: result.historyId,
      conversationId: result.conversationId,
    }),
  ];
}

/**
 * A numbered frame as a socket event. `textSoFar` is the answer up to and including this frame (a
 * socket's RECEIVE_STREAM carries the whole text). Frames no socket event carries answer undefined.
 */
export function socketEmitOf(frame: NumberedFrame, textSoFar: string): SocketEmit | undefined {
  return socketEventOf(frame, frame.seq, frame.historyId, textSoFar);
}

/** socketEmitOf for a frame and its numbering apart (the producer makes no numbered copy). */
export function socketEventOf(frame: SseFrame, seq: number, historyId: string, textSoFar: string): SocketEmit | undefined {
  switch (frame.type) {
    case 'started':
      return ['STREAM_STARTED', { historyId, conversationId: frame.conversationId, seq }];
    case 'stream':
      return ['RECEIVE_STREAM', { prompt: textSoFar, delta: frame.delta, type: 'STREAM', seq, historyId }];
    case 'tool':
      return ['TOOL_STATUS', { name: frame.name, status: frame.status, seq, historyId }];
    case 'complete': {
      const { type: _type, ...fields } = frame;
      return ['STREAM_COMPLETE', { ...fields, seq, historyId }];
    }
    case 'error':
      return ['STREAM_ERROR', { error: frame.error, seq, historyId }];
    case 'approval': {
      const { type: _type, ...card } = frame;
      return ['TOOL_APPROVAL', { ...card, seq, historyId }];
    }
    case 'approval_decided': {
      const { type: _type, ...decided } = frame;
      return ['TOOL_APPROVAL_DECIDED', decided];
    }
    case 'done':
      return ['STREAM_DONE', { seq, historyId }];
    default:
      return undefined;
  }
}
