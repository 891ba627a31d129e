// The embedded shape's frame store: a bounded ring of frames per answer in this process. An answer
// keeps at most maxFramesPerAnswer frames and maxBytesPerAnswer bytes (the oldest go first), all
// answers together at most maxTotalBytes (ended answers go first, oldest end first); an ended answer
// is dropped retentionSeconds after its end and then remembered as expired for as long again.
import {
  type EncodedFrame,
  type TextListener,
  type FrameStore,
  type Following,
  type LogMissing,
  type LogRead,
  type StoredBatch,
  ORPHAN_SEQ_GAP,
} from './stream-log.js';

export interface MemoryStoreOptions {
  maxFramesPerAnswer?: number;
  maxBytesPerAnswer?: number;
  maxTotalBytes?: number;
  /** Expired answers remembered (to answer `expired` rather than `unknown`); the oldest are forgotten. */
  maxTombstones?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
}

interface Follower {
  cursor: number;
  onFrames: TextListener;
  finish: (how: 'ended' | 'stopped') => void;
}

interface Answer {
  frames: EncodedFrame[];
  /** Index of the oldest frame still held; frames before it were dropped by the bound. */
  head: number;
  bytes: number;
  /** The seq of the last frame ever stored (0 before the first). */
  lastSeq: number;
  /** The seq of the last frame the bound dropped (0: none): a reader behind it would miss frames. */
  droppedThrough: number;
  ended: boolean;
  followers: Set<Follower>;
}

/** Bytes a frame costs here: its text (two bytes a character in V8's worst case) and its record. */
const frameBytes = (frame: EncodedFrame): number => frame.json.length * 2 + 48;

export function createMemoryFrameStore(options: MemoryStoreOptions = {}): FrameStore {
  const maxFrames = options.maxFramesPerAnswer ?? 10_000;
  const maxBytesPerAnswer = options.maxBytesPerAnswer ?? 4 * 1024 * 1024;
  const maxTotalBytes = options.maxTotalBytes ?? 64 * 1024 * 1024;
  const maxTombstones = options.maxTombstones ?? 10_000;
  const now = options.now ?? Date.now;
  const onError = options.onError ?? ((error: unknown) => console.error('[stream-log] memory:', error));
  const answers = new Map<string, Answer>();
  /** Ended answers by end time (retention is one setting, so also by expiry): answerId → expiresAt. */
  const endedOrder = new Map<string, number>();
  /** Expired answers: answerId → when they are forgotten. */
  const tombstones = new Map<string, number>();
  /** Ended answers' retention, so an expired one is remembered for as long again. */
  const endedRetention = new Map<string, number>();
  let totalBytes = 0;

  const sweeper = setInterval(() => sweep(), 1_000);
  sweeper.unref();

  function drop(answerId: string, expired: boolean): void {
    const answer = answers.get(answerId);
    if (!answer) return;
    totalBytes -= answer.bytes;
    answers.delete(answerId);
    endedOrder.delete(answerId);
    for (const follower of answer.followers) follower.finish('stopped');
    if (!expired) return;
    const forgetAt = now() + (endedRetention.get(answerId) ?? 0);
    endedRetention.delete(answerId);
    tombstones.set(answerId, forgetAt);
    if (tombstones.size > maxTombstones) tombstones.delete(tombstones.keys().next().value!);
  }

  function sweep(): void {
    const at = now();
    for (const [answerId, expiresAt] of endedOrder) {
      if (expiresAt > at) break;
      drop(answerId, true);
    }
    for (const [answerId, forgetAt] of tombstones) {
      if (forgetAt > at) break;
      tombstones.delete(answerId);
    }
  }

  function trimHead(answer: Answer): void {
    while (answer.frames.length - answer.head > maxFrames || (answer.bytes > maxBytesPerAnswer && answer.frames.length - answer.head > 1)) {
      dropOldestFrame(answer);
    }
  }

  function dropOldestFrame(answer: Answer): void {
    const bytes = frameBytes(answer.frames[answer.head]);
    answer.bytes -= bytes;
    totalBytes -= bytes;
    answer.droppedThrough = answer.frames[answer.head].seq;
    answer.head++;
    // Compact now and then, so dropping the head stays cheap without holding dropped frames.
    if (answer.head > 1024 && answer.head * 2 > answer.frames.length) {
      answer.frames = answer.frames.slice(answer.head);
      answer.head = 0;
    }
  }

  function enforceTotal(writing: Answer): void {
    for (const answerId of endedOrder.keys()) {
      if (totalBytes <= maxTotalBytes) return;
      drop(answerId, true);
    }
    while (totalBytes > maxTotalBytes && writing.frames.length - writing.head > 1) dropOldestFrame(writing);
  }

  /** Stores frames in seq order; `orphan`: the first may jump past the last (the crash sweep's numbering). */
  function append(answerId: string, frames: EncodedFrame[], end: boolean, retentionSeconds: number, orphan = false): void {
    let answer = answers.get(answerId);
    if (!answer) {
      answers.set(answerId, (answer = { frames: [], head: 0, bytes: 0, lastSeq: 0, droppedThrough: 0, ended: false, followers: new Set() }));
      tombstones.delete(answerId);
    }
    if (answer.ended) throw new Error(`Answer ${answerId} has ended; no frame may follow its end`);
    for (const [i, frame] of frames.entries()) {
      const follows = frame.seq === answer.lastSeq + 1 || (orphan && i === 0 && frame.seq > answer.lastSeq);
      if (!follows) throw new Error(`Answer ${answerId}: frame ${frame.seq} does not follow ${answer.lastSeq}`);
      answer.frames.push(frame);
      answer.lastSeq = frame.seq;
      const bytes = frameBytes(frame);
      answer.bytes += bytes;
      totalBytes += bytes;
    }
    trimHead(answer);
    if (end) {
      answer.ended = true;
      endedOrder.set(answerId, now() + retentionSeconds * 1000);
      endedRetention.set(answerId, retentionSeconds * 1000);
    }
    enforceTotal(answer);
    for (const follower of answer.followers) deliver(follower, frames);
    if (end) for (const follower of answer.followers) follower.finish('ended');
  }

  function deliver(follower: Follower, frames: EncodedFrame[]): void {
    const fresh = frames.length > 0 && frames[0].seq <= follower.cursor ? frames.filter((frame) => frame.seq > follower.cursor) : frames;
    if (fresh.length === 0) return;
    follower.cursor = fresh.at(-1)!.seq;
    try {
      follower.onFrames(fresh);
    } catch (error) {
      // A reader's failure is its own: the producer and the other readers go on.
      onError(error);
    }
  }

  function missing(answerId: string): LogMissing {
    return tombstones.has(answerId) ? { kind: 'expired' } : { kind: 'unknown' };
  }

  /** The held frames after afterSeq, or why they cannot be given without a gap. */
  function after(answer: Answer, afterSeq: number): EncodedFrame[] | LogMissing {
    const { frames, head } = answer;
    if (afterSeq < answer.droppedThrough) return { kind: 'truncated', firstSeq: frames[head]?.seq ?? answer.lastSeq + 1 };
    // Seqs rise by one, but for the crash sweep's jump: search for the first frame after afterSeq.
    let low = head;
    let high = frames.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (frames[middle].seq <= afterSeq) low = middle + 1;
      else high = middle;
    }
    return frames.slice(low);
  }

  return {
    kind: 'memory',
    async write(batches: StoredBatch[], retentionSeconds: number) {
      sweep();
      for (const batch of batches) {
        // A batch that conflicts (the answer was ended by the crash sweep) cannot succeed later: reported, dropped.
        try {
          append(batch.answerId, batch.frames, batch.end, retentionSeconds);
        } catch (error) {
          onError(error);
        }
      }
    },
    async read(answerId, afterSeq): Promise<LogRead<unknown, EncodedFrame>> {
      sweep();
      const answer = answers.get(answerId);
      if (!answer) return missing(answerId);
      const frames = after(answer, afterSeq);
      if (!Array.isArray(frames)) return frames;
      return { kind: 'frames', frames, ended: answer.ended };
    },
    async follow(answerId, afterSeq, onFrames): Promise<Following | LogMissing> {
      sweep();
      const answer = answers.get(answerId);
      if (!answer) return missing(answerId);
      const frames = after(answer, afterSeq);
      if (!Array.isArray(frames)) return frames;
      let finish!: Follower['finish'];
      const done = new Promise<'ended' | 'stopped'>((resolve) => (finish = resolve));
      const follower: Follower = {
        cursor: afterSeq,
        onFrames,
        finish: (how) => {
          answer.followers.delete(follower);
          finish(how);
        },
      };
      // Replay and registration happen in one turn of the event loop: no write can fall between them.
      deliver(follower, frames);
      if (answer.ended) follower.finish('ended');
      else answer.followers.add(follower);
      return { kind: 'following', done, stop: () => follower.finish('stopped') };
    },
    async endOrphan(answerId, frames, retentionSeconds) {
      sweep();
      const answer = answers.get(answerId);
      if (answer?.ended) return null;
      if (!answer && tombstones.has(answerId)) return null;
      const from = (answer?.lastSeq ?? 0) + ORPHAN_SEQ_GAP;
      const encoded = frames.map((frame, i) => ({ seq: from + 1 + i, json: JSON.stringify(frame) }));
      append(answerId, encoded, true, retentionSeconds, true);
      return encoded.length > 0 ? from + encoded.length : null;
    },
    async stats() {
      sweep();
      let frames = 0;
      for (const answer of answers.values()) frames += answer.frames.length - answer.head;
      return { answers: answers.size, entries: frames, bytes: totalBytes };
    },
    async close() {
      clearInterval(sweeper);
    },
  };
}
