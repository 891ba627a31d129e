// The answer frame log's contract, one suite for both stores: what the memory ring and the Redis
// Streams promise a resume route. Each store's test file runs it with its own set-up (`open` gives the
// log of one more "process": for Redis its own connections, for the embedded shape a log over the one
// store of the process) and keeps beside it what only that store does (its bound, its commands).
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { ORPHAN_SEQ_GAP, type FrameStore, type LoggedFrame, type StreamLog, type StreamLogOptions } from '../../src/platform/realtime/stream-log.js';

export interface TestFrame {
  type: 'delta' | 'done' | 'error';
  text?: string;
  code?: string;
}

export interface LogUnderTest {
  /** The log of one more process; each is closed by the caller's afterEach. */
  open(options?: StreamLogOptions): Promise<StreamLog<TestFrame>>;
}

export const answerId = (): string => randomBytes(12).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const delta = (i: number): TestFrame => ({ type: 'delta', text: `w${i} ` });

/** Follows an answer and records what arrives; `done` says how the follow finished. */
async function record(log: StreamLog<TestFrame>, id: string, afterSeq: number) {
  const frames: Array<LoggedFrame<TestFrame>> = [];
  const following = await log.follow(id, afterSeq, (frame) => frames.push(frame));
  if (following.kind !== 'following') throw new Error(`follow answered ${following.kind}`);
  return { frames, following };
}

const seqs = (frames: Array<LoggedFrame<TestFrame>>) => frames.map((frame) => frame.seq);
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

export function streamLogContract(subject: () => LogUnderTest): void {
  it('numbers each answer 1, 2, 3... and reads back exactly the frames after a seq', async () => {
    const log = await subject().open();
    const [a, b] = [answerId(), answerId()];
    expect([log.append(a, delta(1)), log.append(a, delta(2)), log.append(b, delta(1)), log.append(a, delta(3))]).toEqual([1, 2, 1, 3]);
    for (let i = 4; i <= 10; i++) log.append(a, delta(i));
    await log.flush();
    const all = await log.read(a, 0);
    expect(all).toEqual({ kind: 'frames', ended: false, frames: range(1, 10).map((seq) => ({ seq, frame: delta(seq) })) });
    const after = await log.read(a, 6);
    expect(after.kind === 'frames' && seqs(after.frames)).toEqual([7, 8, 9, 10]);
    expect(await log.read(a, 10)).toEqual({ kind: 'frames', frames: [], ended: false });
    expect(await log.read(b, 0)).toEqual({ kind: 'frames', ended: false, frames: [{ seq: 1, frame: delta(1) }] });
  });

  it('writes frames appended in one tick as one batch, and the end at once', async () => {
    const log = await subject().open({ flushMs: 10_000 });
    const writes: number[] = [];
    const write = log.store.write.bind(log.store);
    (log.store as { write: FrameStore['write'] }).write = (batches, retention) => {
      writes.push(batches.reduce((sum, batch) => sum + batch.frames.length, 0));
      return write(batches, retention);
    };
    const id = answerId();
    for (let i = 1; i <= 100; i++) log.append(id, delta(i));
    log.append(id, { type: 'done' });
    // The flush interval is long: end() must not wait for it.
    await log.end(id);
    expect(writes).toEqual([101]);
    const read = await log.read(id, 0);
    expect(read.kind === 'frames' && read.frames.length).toBe(101);
    expect(read.kind === 'frames' && read.ended).toBe(true);
  });

  it("writes answers' first frames and ends together at once, and the running answers' other frames at the interval", async () => {
    const log = await subject().open({ flushMs: 10_000 });
    const writes: Array<Array<[string, number, boolean]>> = [];
    const write = log.store.write.bind(log.store);
    (log.store as { write: FrameStore['write'] }).write = (batches, retention) => {
      writes.push(batches.map((batch) => [batch.answerId, batch.frames.length, batch.end]));
      return write(batches, retention);
    };
    const [running, starting, ending] = [answerId(), answerId(), answerId()];
    // The running answer's first frame goes out with another answer's end (both are written soon).
    const before = answerId();
    log.append(running, delta(1));
    log.append(before, delta(1));
    await log.end(before);
    expect(writes).toEqual([
      [
        [running, 1, false],
        [before, 1, true],
      ],
    ]);
    writes.length = 0;
    for (let i = 2; i <= 5; i++) log.append(running, delta(i));
    log.append(starting, delta(1));
    log.append(ending, delta(1));
    log.append(ending, { type: 'done' });
    await log.end(ending);
    expect(writes).toEqual([
      [
        [starting, 1, false],
        [ending, 2, true],
      ],
    ]);
    await log.flush();
    expect(writes.at(-1)).toEqual([[running, 4, false]]);
    const read = await log.read(running, 0);
    expect(read.kind === 'frames' && seqs(read.frames)).toEqual([1, 2, 3, 4, 5]);
  });

  it('makes a running answer known to other processes from its first frame, without waiting for the interval', async () => {
    const unit = subject();
    const producer = await unit.open({ flushMs: 10_000 });
    const reader = await unit.open();
    const id = answerId();
    producer.append(id, delta(1));
    producer.append(id, delta(2));
    let read = await reader.read(id, 0);
    for (let tries = 0; read.kind !== 'frames' && tries < 50; tries++) {
      await sleep(10);
      read = await reader.read(id, 0);
    }
    expect(read).toEqual({ kind: 'frames', ended: false, frames: [1, 2].map((seq) => ({ seq, frame: delta(seq) })) });
  });

  it('lets another process follow from seq N to the end, in order, with the text produced', async () => {
    const unit = subject();
    const producer = await unit.open({ flushMs: 5 });
    const reader = await unit.open();
    const id = answerId();
    let produced = '';
    const send = (frame: TestFrame) => {
      produced += frame.text ?? '';
      return producer.append(id, frame);
    };
    for (let i = 1; i <= 20; i++) send(delta(i));
    await producer.flush();
    const { frames, following } = await record(reader, id, 12);
    for (let i = 21; i <= 60; i++) {
      send(delta(i));
      if (i % 7 === 0) await sleep(3);
    }
    send({ type: 'done' });
    await producer.end(id);
    expect(await following.done).toBe('ended');
    expect(seqs(frames)).toEqual(range(13, 61));
    const upTo12 = (await reader.read(id, 0)) as { frames: Array<LoggedFrame<TestFrame>> };
    const text = [...upTo12.frames.slice(0, 12), ...frames].map((frame) => frame.frame.text ?? '').join('');
    expect(text).toBe(produced);
    expect(frames.at(-1)!.frame).toEqual({ type: 'done' });
  });

  it('replays an ended answer to its end, for a read and a follow', async () => {
    const unit = subject();
    const producer = await unit.open();
    const reader = await unit.open();
    const id = answerId();
    for (let i = 1; i <= 5; i++) producer.append(id, delta(i));
    producer.append(id, { type: 'done' });
    await producer.end(id);
    expect(await reader.read(id, 2)).toEqual({ kind: 'frames', ended: true, frames: [3, 4, 5].map((seq) => ({ seq, frame: delta(seq) })).concat([{ seq: 6, frame: { type: 'done' } }]) });
    // A reader that had everything still learns that the answer ended.
    expect(await reader.read(id, 6)).toEqual({ kind: 'frames', frames: [], ended: true });
    const { frames, following } = await record(reader, id, 3);
    expect(await following.done).toBe('ended');
    expect(seqs(frames)).toEqual([4, 5, 6]);
    const caughtUp = await record(reader, id, 6);
    expect(await caughtUp.following.done).toBe('ended');
    expect(caughtUp.frames).toEqual([]);
    // Ending twice changes nothing.
    await producer.end(id);
    const again = await reader.read(id, 0);
    expect(again.kind === 'frames' && seqs(again.frames)).toEqual(range(1, 6));
  });

  it('tells an unknown answer from an expired one, after retention', async () => {
    const unit = subject();
    // Expired half a second after its end, and remembered as expired for as long again.
    const producer = await unit.open({ retentionSeconds: 0.5 });
    const reader = await unit.open();
    expect(await reader.read(answerId(), 0)).toEqual({ kind: 'unknown' });
    expect(await reader.follow(answerId(), 0, () => undefined)).toEqual({ kind: 'unknown' });
    const id = answerId();
    producer.append(id, delta(1));
    await producer.end(id);
    expect((await reader.read(id, 0)).kind).toBe('frames');
    await sleep(750);
    expect(await reader.read(id, 0)).toEqual({ kind: 'expired' });
    expect(await reader.follow(id, 0, () => undefined)).toEqual({ kind: 'expired' });
  });

  it('neither misses nor repeats a frame for a reader that joins while a batch is being written', async () => {
    const unit = subject();
    const producer = await unit.open({ flushMs: 10_000 });
    const reader = await unit.open();
    const id = answerId();
    for (let i = 1; i <= 10; i++) producer.append(id, delta(i));
    await producer.flush();
    // Join exactly while the next batch (11..20) is on its way to the store, from before and from inside it.
    const joins: Array<{ afterSeq: number; recorded: Promise<Awaited<ReturnType<typeof record>>> }> = [];
    const write = producer.store.write.bind(producer.store);
    (producer.store as { write: FrameStore['write'] }).write = (batches, retention) => {
      for (const afterSeq of [4, 10]) joins.push({ afterSeq, recorded: record(reader, id, afterSeq) });
      const written = write(batches, retention);
      for (const afterSeq of [7, 10, 15]) joins.push({ afterSeq, recorded: record(reader, id, afterSeq) });
      return written;
    };
    for (let i = 11; i <= 20; i++) producer.append(id, delta(i));
    await producer.flush();
    (producer.store as { write: FrameStore['write'] }).write = write;
    // And joins racing every later flush, at whatever seq the producer has reached.
    for (let round = 0; round < 15; round++) {
      const from = producer.nextSeq(id) - 1;
      for (let i = 0; i < 5; i++) producer.append(id, delta(from + 1 + i));
      const flushed = producer.flush();
      joins.push({ afterSeq: from - 2, recorded: record(reader, id, from - 2) });
      joins.push({ afterSeq: from + 2, recorded: record(reader, id, from + 2) });
      await flushed;
    }
    const last = producer.append(id, { type: 'done' });
    await producer.end(id);
    for (const join of joins) {
      const { frames, following } = await join.recorded;
      expect(await following.done).toBe('ended');
      expect(seqs(frames), `joined after ${join.afterSeq}`).toEqual(range(join.afterSeq + 1, last));
    }
  });

  it('ends an answer whose producer died, once, for the readers following it', async () => {
    const unit = subject();
    const producer = await unit.open();
    const sweeper = await unit.open();
    const reader = await unit.open();
    const id = answerId();
    for (let i = 1; i <= 5; i++) producer.append(id, delta(i));
    await producer.flush();
    const { frames, following } = await record(reader, id, 3);
    const interrupted: TestFrame[] = [{ type: 'error', code: 'INTERRUPTED' }, { type: 'done' }];
    // Numbered past anything the producer may have sent live and never stored (a jump, not a loss).
    const [errorSeq, doneSeq] = [5 + ORPHAN_SEQ_GAP + 1, 5 + ORPHAN_SEQ_GAP + 2];
    expect(await sweeper.endOrphan(id, interrupted)).toBe(doneSeq);
    expect(await sweeper.endOrphan(id, interrupted)).toBeNull();
    expect(await following.done).toBe('ended');
    expect(frames.map((frame) => [frame.seq, frame.frame.type])).toEqual([[4, 'delta'], [5, 'delta'], [errorSeq, 'error'], [doneSeq, 'done']]);
    const ending = { kind: 'frames', ended: true, frames: [{ seq: errorSeq, frame: interrupted[0] }, { seq: doneSeq, frame: interrupted[1] }] };
    expect(await reader.read(id, 5)).toEqual(ending);
    // A reader that saw frames 6 and 7 live (sent, never stored) resumes after 7: the error and done, no truncation.
    expect(await reader.read(id, 7)).toEqual(ending);
    const late = await record(reader, id, 7);
    expect(await late.following.done).toBe('ended');
    expect(seqs(late.frames)).toEqual([errorSeq, doneSeq]);
    expect(await reader.read(id, errorSeq)).toEqual({ ...ending, frames: [ending.frames[1]] });
    // A producer that was only slow finds the answer ended: its late frames are refused, never interleaved.
    producer.append(id, delta(6));
    await producer.flush();
    const after = await reader.read(id, 0);
    expect(after.kind === 'frames' && after.frames.map((frame) => frame.frame.type)).toEqual(['delta', 'delta', 'delta', 'delta', 'delta', 'error', 'done']);
  });

  it('stops a follower on request, and it gets nothing after', async () => {
    const unit = subject();
    const producer = await unit.open({ flushMs: 1 });
    const reader = await unit.open();
    const id = answerId();
    producer.append(id, delta(1));
    await producer.flush();
    const { frames, following } = await record(reader, id, 0);
    following.stop();
    expect(await following.done).toBe('stopped');
    producer.append(id, delta(2));
    await producer.end(id);
    await sleep(20);
    expect(seqs(frames)).toEqual([1]);
  });
}
