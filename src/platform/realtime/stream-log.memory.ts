// The embedded shape's frame store: a bounded ring of frames per answer in this process. An answer
// keeps at most maxFramesPerAnswer frames and maxBytesPerAnswer bytes (the oldest go first), all
// answers together at most maxTotalBytes (ended answers go first, oldest end first); an ended answer
// is dropped retentionSeconds after its end and then remembered as expired for as long again. An ended
// answer's frames are packed into one string (the texts one a line), so the many answers kept for their
// retention are a few objects each for the collector to mark, not two a frame.
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

/** Frames of consecutive seqs from `first`, their texts joined by newlines (JSON.stringify never writes one). */
interface Packed {
  first: number;
  count: number;
  texts: string;
}

interface Answer {
  /** A running answer's frames; an ended one's are in `packed`. */
  frames: EncodedFrame[];
  /** An ended answer's frames: one run, or two after the crash sweep's jump. */
  packed?: Packed[];
  /** Index of the oldest frame still held; frames before it were dropped by the bound. */
  head: number;
  bytes: number;
  /** The seq of the last frame ever stored (0 before the first). */
  lastSeq: number;
  /** The seq of the last frame the bound dropped (0: none): a reader behind it would miss frames. */
  droppedThrough: number;
  ended: boolean;
  /** An ended answer's retention, so once expired it is remembered for as long again. */
  retentionMs: number;
  followers: Set<Follower>;
}

/** Bytes a frame costs here: its text (two bytes a character in V8's worst case) and its record. */
const frameBytes = (frame: EncodedFrame): number => frame.json.length * 2 + 48;
/** Bytes a packed run costs: its texts and newlines, and its record. */
const packedBytes = (run: Packed): number => run.texts.length * 2 + 48;

/** Packs frames (in seq order) into runs of consecutive seqs. */
function pack(frames: EncodedFrame[]): Packed[] {
  const runs: Packed[] = [];
  let from = 0;
  for (let i = 1; i <= frames.length; i++) {
    if (i < frames.length && frames[i].seq === frames[i - 1].seq + 1) continue;
    const texts = frames.slice(from, i).map((frame) => frame.json);
    runs.push({ first: frames[from].seq, count: i - from, texts: texts.join('\n') });
    from = i;
  }
  return runs;
}

function unpack(runs: Packed[], afterSeq: number): EncodedFrame[] {
  const frames: EncodedFrame[] = [];
  for (const run of runs) {
    if (run.first + run.count - 1 <= afterSeq) continue;
    const texts = run.texts.split('\n');
    for (let i = Math.max(0, afterSeq - run.first + 1); i < run.count; i++) frames.push({ seq: run.first + i, json: texts[i] });
  }
  return frames;
}

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
    const forgetAt = now() + answer.retentionMs;
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
      answers.set(answerId, (answer = { frames: [], head: 0, bytes: 0, lastSeq: 0, droppedThrough: 0, ended: false, retentionMs: 0, followers: new Set() }));
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
    enforceTotal(answer);
    for (const follower of answer.followers) deliver(follower, frames);
    if (!end) return;
    answer.ended = true;
    answer.retentionMs = retentionSeconds * 1000;
    endedOrder.set(answerId, now() + answer.retentionMs);
    for (const follower of answer.followers) follower.finish('ended');
    // Packed once ended: its frames are only read from now on.
    answer.packed = pack(answer.frames.slice(answer.head));
    answer.frames = [];
    answer.head = 0;
    totalBytes -= answer.bytes;
    answer.bytes = answer.packed.reduce((sum, run) => sum + packedBytes(run), 0);
    totalBytes += answer.bytes;
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
    const { frames, head, packed } = answer;
    if (afterSeq < answer.droppedThrough) return { kind: 'truncated', firstSeq: (packed ? packed[0]?.first : frames[head]?.seq) ?? answer.lastSeq + 1 };
    if (packed) return unpack(packed, afterSeq);
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
      for (const answer of answers.values()) frames += answer.packed ? answer.packed.reduce((sum, run) => sum + run.count, 0) : answer.frames.length - answer.head;
      return { answers: answers.size, entries: frames, bytes: totalBytes };
    },
    async close() {
      clearInterval(sweeper);
    },
  };
}
