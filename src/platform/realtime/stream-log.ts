// An answer's frame log: every frame an answer sends, numbered (seq 1, 2, 3... per answer) and kept
// while the answer runs and STREAM_RETENTION_SECONDS after it ends, so that a reader on any process
// can replay what it missed and follow the rest. The log is written beside the live path, never in it:
// append() numbers a frame and returns at once, the producer sends the frame to its own readers itself,
// and the frames reach the store in batches: one store call per flush for all running answers, one
// entry per answer. A frame is kept as its JSON text, encoded once (by the producer, when it has it).
// Stores: stream-log.memory.ts (embedded shape), stream-log.redis.ts (REDIS_URL).

/** Default of STREAM_RETENTION_SECONDS: how long an ended answer stays readable. */
export const DEFAULT_RETENTION_SECONDS = 600;
/** How long frames wait to be written together (the memory store's; REDIS_FLUSH_MS for Redis). */
export const DEFAULT_FLUSH_MS = 20;
/**
 * The Redis store's interval: about 10 entries a 40-frame answer of a second, not 40. A reader on
 * another process lags that much more; the crash sweep's numbering covers frames sent but not stored.
 */
export const REDIS_FLUSH_MS = 100;
/**
 * An answer's first frame and its end wait this long at most (with those of other answers), not the
 * interval. Long enough that a flush carries several answers' (each store call is a write to Redis).
 */
export const SOON_MS = 20;
/** A batch this long is written at once without waiting for the interval. */
export const DEFAULT_MAX_BATCH_FRAMES = 256;

/**
 * How far past the last stored frame the crash sweep numbers an orphan's frames (the INTERRUPTED error,
 * done). A producer sends each frame live before the log stores it (at the next flush, or later when the
 * store is failing), so a reader may have seen frames the log never got; the orphan frames must come after
 * all of them. The numbers skipped are a jump, not a loss: readers and resumes pass over it.
 */
export const ORPHAN_SEQ_GAP = 1_000_000;

export interface LoggedFrame<F> {
  seq: number;
  frame: F;
}

/** A frame as the store keeps it: its number and its JSON text, encoded once. */
export interface EncodedFrame {
  seq: number;
  json: string;
}

/** What one flush writes for one answer: its next frames in order, and whether the answer ended. */
export interface StoredBatch {
  answerId: string;
  frames: EncodedFrame[];
  end: boolean;
}

/**
 * Why frames cannot be served: `unknown` (never logged, or gone so long ago that the store forgot it),
 * `expired` (ended and past retention), `truncated` (the frames just after afterSeq were dropped by
 * the store's bound; a resume from there would have a gap).
 */
export type LogMissing = { kind: 'unknown' } | { kind: 'expired' } | { kind: 'truncated'; firstSeq: number };

export type LogRead<F, Item = LoggedFrame<F>> = { kind: 'frames'; frames: Item[]; ended: boolean } | LogMissing;

export interface Following {
  kind: 'following';
  /** Resolves with 'ended' once the end has been delivered, or 'stopped' after stop(). */
  readonly done: Promise<'ended' | 'stopped'>;
  stop(): void;
}

/**
 * How a store keeps a frame's text on its line: `pack` may give a shorter line, which `unpack` turns back
 * into the same text. A packed line holds no newline, and `unpack` tells a line it packed from a text kept
 * as it came (which it gives back unchanged). The service's: open-stream-log.ts, `storedFrameLines`.
 */
export interface FrameLines {
  pack(json: string): string;
  unpack(line: string): string;
}

/** Frames as the store keeps them (their JSON text), in seq order: the replay in one call, then each batch stored. */
export type TextListener = (frames: EncodedFrame[]) => void;

/** The part each store implements; the log above it owns numbering, batching and decoding. */
export interface FrameStore {
  readonly kind: 'memory' | 'redis';
  /** Writes the batches of several answers, each in seq order; resolves once stored. */
  write(batches: StoredBatch[], retentionSeconds: number): Promise<void>;
  read(answerId: string, afterSeq: number): Promise<LogRead<unknown, EncodedFrame>>;
  /** Replays after afterSeq, then delivers later frames in order until the end; never one twice. */
  follow(answerId: string, afterSeq: number, onFrames: TextListener): Promise<Following | LogMissing>;
  /**
   * Ends an answer whose producer is gone: appends frames numbered from the last stored seq +
   * ORPHAN_SEQ_GAP + 1, and the end, unless the answer already ended. The skipped numbers are no
   * truncation. Resolves with the seq of the last frame appended, or null.
   */
  endOrphan(answerId: string, frames: unknown[], retentionSeconds: number): Promise<number | null>;
  /** What the store holds now, to report its bound: entries are frames (memory) or batches (Redis). */
  stats(): Promise<{ answers: number; entries: number; bytes: number }>;
  close(): Promise<void>;
}

export interface StreamLogOptions {
  retentionSeconds?: number;
  flushMs?: number;
  maxBatchFrames?: number;
  /** Told about failed writes (they are retried on the next flush, in order). */
  onError?: (error: unknown, context: { answerId?: string }) => void;
  /** false (STREAM_LOG=off, for the bench only): append() numbers the frame and keeps nothing. */
  keep?: boolean;
  /** How append() encodes a frame (default JSON.stringify); appendText() takes the text made already. */
  encode?: (frame: never) => string;
}

interface Running {
  nextSeq: number;
  pending: EncodedFrame[];
  ending: boolean;
  ended?: Promise<void>;
}

/** A promise settled by the next flush. */
interface NextFlush {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class StreamLog<F = unknown> {
  readonly retentionSeconds: number;
  private readonly flushMs: number;
  private readonly maxBatchFrames: number;
  private readonly onError: NonNullable<StreamLogOptions['onError']>;
  private readonly running = new Map<string, Running>();
  /** Answers with frames waiting for the next flush, in the order they got their first one. */
  private readonly dirty = new Set<string>();
  /** Of those, the answers whose first frame or end waits: written within SOON_MS, not the interval. */
  private readonly urgent = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private soonTimer: NodeJS.Timeout | undefined;
  private fullTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Settled by the flush that writes the urgent answers (their ends' promises). */
  private soonFlush: NextFlush | undefined;
  private closed = false;
  private readonly keep: boolean;
  private readonly encode: (frame: F) => string;

  constructor(
    readonly store: FrameStore,
    options: StreamLogOptions = {},
  ) {
    this.retentionSeconds = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    this.flushMs = options.flushMs ?? DEFAULT_FLUSH_MS;
    this.maxBatchFrames = options.maxBatchFrames ?? DEFAULT_MAX_BATCH_FRAMES;
    this.onError = options.onError ?? ((error, context) => console.error(`[stream-log] ${context.answerId ?? ''}`, error));
    this.keep = options.keep ?? true;
    this.encode = (options.encode as ((frame: F) => string) | undefined) ?? encode;
  }

  /**
   * Numbers the answer's next frame and queues it for the store; returns its seq at once, so the
   * producer can send the frame (with that seq) to its own readers without waiting on the log.
   */
  append(answerId: string, frame: F): number {
    const answer = this.runningFor(answerId);
    const seq = answer.nextSeq++;
    if (this.keep) this.queue(answerId, answer, seq, this.encode(frame));
    return seq;
  }

  /** append() of a frame the producer has encoded already (its JSON text, as append's encode makes it). */
  appendText(answerId: string, json: string): number {
    const answer = this.runningFor(answerId);
    const seq = answer.nextSeq++;
    if (this.keep) this.queue(answerId, answer, seq, json);
    return seq;
  }

  private runningFor(answerId: string): Running {
    if (this.closed) throw new Error('Stream log is closed');
    let answer = this.running.get(answerId);
    if (!answer) this.running.set(answerId, (answer = { nextSeq: 1, pending: [], ending: false }));
    if (answer.ending) throw new Error(`Answer ${answerId} has ended; no frame may follow its end`);
    return answer;
  }

  private queue(answerId: string, answer: Running, seq: number, json: string): void {
    answer.pending.push({ seq, json });
    this.dirty.add(answerId);
    // The first frame goes out soon (with the other answers' first frames and ends): from then on every
    // process knows the answer (a resume or a second tab never finds a running answer unknown). Later
    // frames wait for the interval, all answers' in one store call.
    if (seq === 1) this.soon(answerId);
    else if (answer.pending.length >= this.maxBatchFrames) this.fullTimer ??= setTimeout(() => this.flush().catch(() => undefined), 0);
    this.timer ??= setTimeout(() => this.flush().catch(() => undefined), this.flushMs);
  }

  /** The seq the next append of this answer would get (1 for an answer not started here). */
  nextSeq(answerId: string): number {
    return this.running.get(answerId)?.nextSeq ?? 1;
  }

  /**
   * Marks the answer ended: its frames still pending are written with the end within SOON_MS (with the
   * other answers' first frames and ends), and its retention starts. Resolves once the store holds them.
   * Calling it twice is harmless.
   */
  end(answerId: string): Promise<void> {
    const answer = this.running.get(answerId);
    // Not running here (no frame, or already ended and written): the store ends it unless it has ended.
    if (!answer) return this.store.endOrphan(answerId, [], this.retentionSeconds).then(() => undefined);
    if (answer.ended) return answer.ended;
    if (!this.keep) {
      this.running.delete(answerId);
      return Promise.resolve();
    }
    answer.ending = true;
    this.dirty.add(answerId);
    answer.ended = this.soon(answerId);
    return answer.ended;
  }

  /** Queues the answer for the next soon flush; answers that flush's promise. */
  private soon(answerId: string): Promise<void> {
    this.urgent.add(answerId);
    this.soonTimer ??= setTimeout(() => this.flushSoon().catch(() => undefined), SOON_MS);
    if (!this.soonFlush) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      // A failure is reported by the write and retried; whoever did not wait on the end need not hear it.
      promise.catch(() => undefined);
      this.soonFlush = { promise, resolve, reject };
    }
    return this.soonFlush.promise;
  }

  async read(answerId: string, afterSeq = 0): Promise<LogRead<F>> {
    const found = await this.store.read(answerId, afterSeq);
    if (found.kind !== 'frames') return found;
    return { kind: 'frames', frames: decodeLogged<F>(found.frames), ended: found.ended };
  }

  /** Replays the frames after afterSeq, then the live ones in order until the end, from any process. */
  follow(answerId: string, afterSeq: number, onFrame: (frame: LoggedFrame<F>) => void): Promise<Following | LogMissing> {
    return this.store.follow(answerId, afterSeq, (frames) => {
      for (const frame of decodeLogged<F>(frames)) onFrame(frame);
    });
  }

  /**
   * follow() without decoding: the frames' stored JSON text (the frame without `seq` and `historyId`),
   * the replay in one call; for a reader that writes them out as they are (the SSE resume).
   */
  followText(answerId: string, afterSeq: number, onFrames: TextListener): Promise<Following | LogMissing> {
    return this.store.follow(answerId, afterSeq, onFrames);
  }

  /** Ends, from another process, an answer whose producer died (the crash sweep's INTERRUPTED frames). */
  endOrphan(answerId: string, frames: F[]): Promise<number | null> {
    return this.store.endOrphan(answerId, frames, this.retentionSeconds);
  }

  /** Writes everything pending now; resolves once the store holds it (and any flush before it). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    clearTimeout(this.fullTimer);
    this.timer = this.fullTimer = undefined;
    return this.run(this.takeBatches(this.dirty));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush().catch(() => undefined);
    this.closed = true;
    await this.store.close();
  }

  /** Writes the urgent answers' pending frames (first frames, ends); the others wait for the interval. */
  private flushSoon(): Promise<void> {
    this.soonTimer = undefined;
    return this.run(this.takeBatches(this.urgent));
  }

  /**
   * Writes the batches taken (the urgent answers are among them, so the soon flush's promise is settled
   * by this one). Flushes run one after another, so the store sees each answer's batches in seq order.
   */
  private run(batches: StoredBatch[]): Promise<void> {
    const settles = this.soonFlush;
    this.soonFlush = undefined;
    clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
    const next = this.flushing.then(() => (batches.length > 0 ? this.write(batches) : undefined));
    this.flushing = next.catch(() => undefined);
    if (settles) next.then(settles.resolve, settles.reject);
    return next;
  }

  private takeBatches(answerIds: Set<string>): StoredBatch[] {
    const batches: StoredBatch[] = [];
    for (const answerId of answerIds) {
      const answer = this.running.get(answerId);
      this.dirty.delete(answerId);
      this.urgent.delete(answerId);
      if (!answer || (answer.pending.length === 0 && !answer.ending)) continue;
      batches.push({ answerId, frames: answer.pending, end: answer.ending });
      answer.pending = [];
      if (answer.ending) this.running.delete(answerId);
    }
    answerIds.clear();
    return batches;
  }

  private async write(batches: StoredBatch[]): Promise<void> {
    try {
      await this.store.write(batches, this.retentionSeconds);
    } catch (error) {
      this.onError(error, {});
      // Put the frames back in front of anything appended since, so the next flush keeps the order.
      for (const batch of batches) this.requeue(batch);
      this.timer ??= setTimeout(() => this.flush().catch(() => undefined), Math.max(this.flushMs, 100));
      throw error;
    }
  }

  private requeue(batch: StoredBatch): void {
    let answer = this.running.get(batch.answerId);
    if (!answer) {
      const nextSeq = (batch.frames.at(-1)?.seq ?? 0) + 1;
      this.running.set(batch.answerId, (answer = { nextSeq, pending: [], ending: batch.end }));
    }
    answer.pending = [...batch.frames, ...answer.pending];
    answer.ending ||= batch.end;
    this.dirty.add(batch.answerId);
  }
}

function encode(frame: unknown): string {
  const json = JSON.stringify(frame);
  if (json === undefined) throw new TypeError('Stream frames must be JSON-serialisable');
  return json;
}

/** The store of a log that keeps nothing (STREAM_LOG=off, for the bench only): every answer reads as unknown. */
export function createNullFrameStore(): FrameStore {
  return {
    kind: 'memory',
    write: async () => {},
    read: async () => ({ kind: 'unknown' }),
    follow: async () => ({ kind: 'unknown' }),
    endOrphan: async () => null,
    stats: async () => ({ answers: 0, entries: 0, bytes: 0 }),
    close: async () => {},
  };
}

/** Decodes stored frames with one parse (a parse per frame costs about twice as much); the texts were written by append(). */
export function decodeLogged<F>(frames: EncodedFrame[]): LoggedFrame<F>[] {
  if (frames.length === 0) return [];
  const decoded = (frames.length === 1 ? [JSON.parse(frames[0].json)] : JSON.parse(`[${frames.map((f) => f.json).join(',')}]`)) as F[];
  return frames.map((frame, i) => ({ seq: frame.seq, frame: decoded[i] }));
}
