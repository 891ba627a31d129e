// The embedded shape's frame store: a bounded ring of frames per answer in this process. An answer
// keeps at most maxFramesPerAnswer frames and maxBytesPerAnswer bytes (the oldest go first), all
// answers together at most maxTotalBytes (ended answers go first, oldest end first); an ended answer
// is dropped retentionSeconds after its end and then remembered as expired for as long again.
// A running answer's frames are kept off the JS heap: their UTF-8 texts one after another in one Buffer,
// their seqs and where each starts in typed arrays (a slab, reused by the next answer once this one
// ends), so the young generation's collections, which run many times during an answer, find a few
// objects an answer to copy, not two a frame. An ended answer's texts are moved, one a line, into the
// archive: large Buffers filled one after another and let go once no answer in them is held (ended
// answers go oldest first), so the many answers kept for their retention are a few small objects each
// for the collector, and none of their text is on its heap. With `lines`, each frame's text is kept in a
// shorter form of its own (open-stream-log.ts: a text piece as its text alone), so the same bound holds
// more answers: under load it is the bound, not the retention, that decides how long ended answers last.
import {
  type EncodedFrame,
  type FrameLines,
  type TextListener,
  type FrameStore,
  type Following,
  type LogMissing,
  type LogRead,
  type StoredBatch,
  ORPHAN_SEQ_GAP,
} from './stream-log.js';

export interface MemoryStoreOptions {
  /** The frames' texts as lines of another form (default: as they come). */
  lines?: FrameLines;
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

/** Ended answers' texts, one after another; held while an answer in it is. */
interface ArchiveChunk {
  text: Buffer;
  used: number;
}

/**
 * Frames of consecutive seqs from `first`: their texts joined by newlines (JSON.stringify never writes
 * one), at chunk.text[start, end).
 */
interface Packed {
  first: number;
  count: number;
  chunk: ArchiveChunk;
  start: number;
  end: number;
}

/**
 * A running answer's frames: frame i is the UTF-8 text at text[starts[i], starts[i + 1] - 1) (the last
 * one's ends at `used` - 1), each followed by a newline, so that a run of frames decodes in one call to
 * their texts one a line, as an ended answer packs them.
 */
interface Slab {
  text: Buffer;
  seqs: Float64Array;
  starts: Uint32Array;
}

interface Answer {
  /** A running answer's frames (none before its first); an ended one's are in `packed`. */
  slab?: Slab;
  /** Frames written to the slab; `head` is the oldest still held (those before it were dropped by the bound). */
  count: number;
  head: number;
  /** Bytes of the slab's text written. */
  used: number;
  /** An ended answer's frames: one run, or two after the crash sweep's jump. */
  packed?: Packed[];
  bytes: number;
  /** The seq of the last frame ever stored (0 before the first). */
  lastSeq: number;
  /** The seq of the last frame the bound dropped (0: none): a reader behind it would miss frames. */
  droppedThrough: number;
  ended: boolean;
  /** An ended answer's retention, so once expired it is remembered for as long again. */
  retentionMs: number;
  followers?: Set<Follower>;
}

/** Bytes a held frame costs beside its text and newline: its seq and its start. */
const FRAME_INDEX_BYTES = 12;
/** Bytes a packed run costs: its text and its record. */
const packedBytes = (run: Packed): number => run.end - run.start + 48;
/** The archive's chunks; an ended answer's text larger than a quarter of one gets a chunk of its own. */
const ARCHIVE_CHUNK_BYTES = 256 * 1024;

/** A new slab's room: a 40-frame answer's text fits in the first. */
const SLAB_TEXT_BYTES = 4096;
const SLAB_FRAMES = 64;
/** Slabs of ended answers kept for the next answers, and the largest kept (larger ones go to the collector). */
const POOLED_SLABS = 256;
const POOLED_TEXT_BYTES = 16 * 1024;
const POOLED_FRAMES = 1024;

/** An ended answer's frames after afterSeq, from its packed runs. */
function unpack(runs: Packed[], afterSeq: number, lines: FrameLines | undefined): EncodedFrame[] {
  const frames: EncodedFrame[] = [];
  for (const run of runs) {
    if (run.first + run.count - 1 <= afterSeq) continue;
    const texts = run.chunk.text.toString('utf8', run.start, run.end).split('\n');
    for (let i = Math.max(0, afterSeq - run.first + 1); i < run.count; i++) frames.push({ seq: run.first + i, json: lines ? lines.unpack(texts[i]) : texts[i] });
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
  const lines = options.lines;
  const answers = new Map<string, Answer>();
  /** Ended answers by end time (retention is one setting, so also by expiry): answerId → expiresAt. */
  const endedOrder = new Map<string, number>();
  /** Expired answers: answerId → when they are forgotten. */
  const tombstones = new Map<string, number>();
  /** Slabs of ended answers, for the next answers to write in. */
  const slabs: Slab[] = [];
  /** The archive chunk being filled. */
  let archive: ArchiveChunk | undefined;
  let totalBytes = 0;

  const sweeper = setInterval(() => sweep(), 1_000);
  sweeper.unref();

  function drop(answerId: string, expired: boolean): void {
    const answer = answers.get(answerId);
    if (!answer) return;
    totalBytes -= answer.bytes;
    answers.delete(answerId);
    endedOrder.delete(answerId);
    release(answer);
    if (answer.followers) for (const follower of answer.followers) follower.finish('stopped');
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

  /** Where frame i's text ends in its slab (its newline). */
  const endOf = (answer: Answer, i: number): number => (i + 1 < answer.count ? answer.slab!.starts[i + 1] : answer.used) - 1;
  /** Bytes frame i costs: its text, its newline and its index entries. */
  const heldBytes = (answer: Answer, i: number): number => endOf(answer, i) + 1 - answer.slab!.starts[i] + FRAME_INDEX_BYTES;

  function trimHead(answer: Answer): void {
    while (answer.count - answer.head > maxFrames || (answer.bytes > maxBytesPerAnswer && answer.count - answer.head > 1)) {
      dropOldestFrame(answer);
    }
  }

  function dropOldestFrame(answer: Answer): void {
    const bytes = heldBytes(answer, answer.head);
    answer.bytes -= bytes;
    totalBytes -= bytes;
    answer.droppedThrough = answer.slab!.seqs[answer.head];
    // The frame's room is taken back when the slab next runs out of it (room()).
    answer.head++;
  }

  function enforceTotal(writing: Answer): void {
    for (const answerId of endedOrder.keys()) {
      if (totalBytes <= maxTotalBytes) return;
      drop(answerId, true);
    }
    while (totalBytes > maxTotalBytes && writing.count - writing.head > 1) dropOldestFrame(writing);
  }

  /**
   * Makes room in the answer's slab for one more frame of at most `textBytes` bytes: the frames the
   * bound dropped are moved out, and a slab more than three quarters full afterwards is replaced by one
   * twice as large (or more), so moving is rare and its cost spread over the frames written since.
   */
  function room(answer: Answer, textBytes: number): Slab {
    const slab = (answer.slab ??= slabs.pop() ?? newSlab(SLAB_TEXT_BYTES, SLAB_FRAMES));
    if (answer.used + textBytes <= slab.text.length && answer.count < slab.seqs.length) return slab;
    const { head, count } = answer;
    const from = head < count ? slab.starts[head] : answer.used;
    const liveBytes = answer.used - from;
    const liveFrames = count - head;
    let textRoom = slab.text.length;
    while (liveBytes + textBytes > textRoom * 0.75) textRoom *= 2;
    let frameRoom = slab.seqs.length;
    while (liveFrames + 1 > frameRoom * 0.75) frameRoom *= 2;
    const next = textRoom === slab.text.length && frameRoom === slab.seqs.length ? slab : newSlab(textRoom, frameRoom);
    if (next === slab) {
      slab.text.copyWithin(0, from, answer.used);
      slab.seqs.copyWithin(0, head, count);
    } else {
      next.text.set(slab.text.subarray(from, answer.used), 0);
      next.seqs.set(slab.seqs.subarray(head, count), 0);
    }
    // Forward, so moving within one slab reads each start before it is overwritten.
    for (let i = 0; i < liveFrames; i++) next.starts[i] = slab.starts[head + i] - from;
    answer.slab = next;
    answer.head = 0;
    answer.count = liveFrames;
    answer.used = liveBytes;
    if (next !== slab) recycle(slab);
    return next;
  }

  function newSlab(textBytes: number, frames: number): Slab {
    return { text: Buffer.allocUnsafeSlow(textBytes), seqs: new Float64Array(frames), starts: new Uint32Array(frames) };
  }

  function recycle(slab: Slab): void {
    if (slabs.length < POOLED_SLABS && slab.text.length <= POOLED_TEXT_BYTES && slab.seqs.length <= POOLED_FRAMES) slabs.push(slab);
  }

  /** Gives the answer's slab back (its frames packed, or the answer dropped). */
  function release(answer: Answer): void {
    if (!answer.slab) return;
    recycle(answer.slab);
    answer.slab = undefined;
    answer.count = answer.head = answer.used = 0;
  }

  function store(answer: Answer, frame: EncodedFrame): void {
    const line = lines ? lines.pack(frame.json) : frame.json;
    // Three bytes a UTF-16 unit at most in UTF-8, and the newline.
    const slab = room(answer, line.length * 3 + 1);
    const start = answer.used;
    const written = slab.text.write(line, start, 'utf8');
    slab.text[start + written] = 0x0a;
    slab.seqs[answer.count] = frame.seq;
    slab.starts[answer.count] = start;
    answer.count++;
    answer.used = start + written + 1;
    answer.lastSeq = frame.seq;
    const bytes = written + 1 + FRAME_INDEX_BYTES;
    answer.bytes += bytes;
    totalBytes += bytes;
  }

  /** The texts of frames from..to-1 of a running answer, one decode for all. */
  function textsOf(answer: Answer, from: number, to: number): string[] {
    if (from >= to) return [];
    const texts = answer.slab!.text.toString('utf8', answer.slab!.starts[from], endOf(answer, to - 1)).split('\n');
    return lines ? texts.map((line) => lines.unpack(line)) : texts;
  }

  /** Moves an ended answer's held frames to the archive, in runs of consecutive seqs, and gives its slab back. */
  function pack(answer: Answer): Packed[] {
    const runs: Packed[] = [];
    const { slab, head, count } = answer;
    if (!slab || head >= count) {
      release(answer);
      return runs;
    }
    const from = slab.starts[head];
    const bytes = answer.used - from;
    let chunk = archive;
    if (bytes > ARCHIVE_CHUNK_BYTES / 4) chunk = { text: Buffer.allocUnsafeSlow(bytes), used: 0 };
    else if (!chunk || chunk.used + bytes > chunk.text.length) chunk = archive = { text: Buffer.allocUnsafeSlow(ARCHIVE_CHUNK_BYTES), used: 0 };
    const at = chunk.used - from;
    slab.text.copy(chunk.text, chunk.used, from, answer.used);
    chunk.used += bytes;
    let first = head;
    for (let i = head + 1; i <= count; i++) {
      if (i < count && slab.seqs[i] === slab.seqs[i - 1] + 1) continue;
      runs.push({ first: slab.seqs[first], count: i - first, chunk, start: at + slab.starts[first], end: at + endOf(answer, i - 1) });
      first = i;
    }
    release(answer);
    return runs;
  }

  /** Stores frames in seq order; `orphan`: the first may jump past the last (the crash sweep's numbering). */
  function append(answerId: string, frames: EncodedFrame[], end: boolean, retentionSeconds: number, orphan = false): void {
    let answer = answers.get(answerId);
    if (!answer) {
      answers.set(answerId, (answer = { count: 0, head: 0, used: 0, bytes: 0, lastSeq: 0, droppedThrough: 0, ended: false, retentionMs: 0 }));
      tombstones.delete(answerId);
    }
    if (answer.ended) throw new Error(`Answer ${answerId} has ended; no frame may follow its end`);
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i];
      const follows = frame.seq === answer.lastSeq + 1 || (orphan && i === 0 && frame.seq > answer.lastSeq);
      if (!follows) throw new Error(`Answer ${answerId}: frame ${frame.seq} does not follow ${answer.lastSeq}`);
      store(answer, frame);
    }
    trimHead(answer);
    enforceTotal(answer);
    if (answer.followers) for (const follower of answer.followers) deliver(follower, frames);
    if (!end) return;
    answer.ended = true;
    answer.retentionMs = retentionSeconds * 1000;
    endedOrder.set(answerId, now() + answer.retentionMs);
    if (answer.followers) for (const follower of answer.followers) follower.finish('ended');
    // Packed once ended: its frames are only read from now on.
    answer.packed = pack(answer);
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
    const { slab, head, count, packed } = answer;
    if (afterSeq < answer.droppedThrough) {
      const firstSeq = packed ? packed[0]?.first : slab && head < count ? slab.seqs[head] : undefined;
      return { kind: 'truncated', firstSeq: firstSeq ?? answer.lastSeq + 1 };
    }
    if (packed) return unpack(packed, afterSeq, lines);
    if (!slab) return [];
    // Seqs rise by one, but for the crash sweep's jump: search for the first frame after afterSeq.
    let low = head;
    let high = count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (slab.seqs[middle] <= afterSeq) low = middle + 1;
      else high = middle;
    }
    const texts = textsOf(answer, low, count);
    return texts.map((json, i) => ({ seq: slab.seqs[low + i], json }));
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
          answer.followers?.delete(follower);
          finish(how);
        },
      };
      // Replay and registration happen in one turn of the event loop: no write can fall between them.
      deliver(follower, frames);
      if (answer.ended) follower.finish('ended');
      else (answer.followers ??= new Set()).add(follower);
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
      for (const answer of answers.values()) frames += answer.packed ? answer.packed.reduce((sum, run) => sum + run.count, 0) : answer.count - answer.head;
      return { answers: answers.size, entries: frames, bytes: totalBytes };
    },
    async close() {
      clearInterval(sweeper);
    },
  };
}
