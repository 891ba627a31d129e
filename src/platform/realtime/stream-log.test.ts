// The answer frame log on both stores: the contract every store keeps (test/support/stream-log-contract.ts)
// and, beside it, each store's own promises: the memory ring's bounds, the Redis stream's bound and the
// commands a batch costs (counted by MONITOR on a connection of its own).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { answerId, streamLogContract, type LogUnderTest, type TestFrame } from '../../../test/support/stream-log-contract.js';
import { until } from '../../../test/support/until.js';
import type { SseFrame } from './client-frames.js';
import { storedFrameLines, storedJsonOf } from './open-stream-log.js';
import { createNullFrameStore, StreamLog, type FrameStore, type StreamLogOptions } from './stream-log.js';
import { createMemoryFrameStore, type MemoryStoreOptions } from './stream-log.memory.js';
import { createRedisFrameStore, type RedisStoreOptions } from './stream-log.redis.js';

const redisUrl = process.env.TEST_REDIS_URL;
const delta = (i: number): TestFrame => ({ type: 'delta', text: `w${i} ` });

describe('stream log on the memory store', () => {
  const logs: Array<StreamLog<TestFrame>> = [];
  let store: FrameStore;

  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
  });

  /** One store for the process (the embedded shape), a log per "process" over it. */
  function unit(storeOptions: MemoryStoreOptions = {}): LogUnderTest {
    store = createMemoryFrameStore(storeOptions);
    return {
      async open(options?: StreamLogOptions) {
        const log = new StreamLog<TestFrame>(store, options);
        logs.push(log);
        return log;
      },
    };
  }

  describe('contract', () => {
    streamLogContract(() => unit());
  });

  it('keeps at most maxFramesPerAnswer frames of an answer, and says a resume from before them has a gap', async () => {
    const log = await unit({ maxFramesPerAnswer: 50 }).open();
    const id = answerId();
    for (let i = 1; i <= 120; i++) log.append(id, delta(i));
    await log.flush();
    expect(await store.stats()).toMatchObject({ answers: 1, entries: 50 });
    expect(await log.read(id, 10)).toEqual({ kind: 'truncated', firstSeq: 71 });
    expect(await log.follow(id, 69, () => undefined)).toEqual({ kind: 'truncated', firstSeq: 71 });
    const recent = await log.read(id, 70);
    expect(recent.kind === 'frames' && recent.frames.map((frame) => frame.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 71 + i));
  });

  it('gives back every text exactly, whatever its characters and however long the answer, across its bound', async () => {
    const log = await unit({ maxFramesPerAnswer: 700 }).open();
    const pieces = ['plain ', 'é à ü ', '漢字 ', '🙂 👍🏽 ', 'a "quote" \\ and a\nnewline ', '\u2028 ', 'x'.repeat(3000)];
    const text = (i: number) => `${i}: ${pieces[i % pieces.length].repeat(1 + (i % 5))}`;
    const [first, second] = [answerId(), answerId()];
    // Well past the first room an answer gets, and past its bound, so its oldest frames are dropped and the rest moved.
    for (let i = 1; i <= 2_000; i++) {
      log.append(first, { type: 'delta', text: text(i) });
      if (i % 150 === 0) await log.flush();
    }
    await log.flush();
    const expected = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, frame: { type: 'delta', text: text(from + i) } }));
    expect(await log.read(first, 1_300)).toEqual({ kind: 'frames', ended: false, frames: expected(1_301, 2_000) });
    expect(await log.read(first, 1_299)).toEqual({ kind: 'truncated', firstSeq: 1_301 });
    const followed: unknown[] = [];
    const following = await log.follow(first, 1_900, (frame) => followed.push(frame));
    log.append(first, { type: 'delta', text: text(2_001) });
    await log.end(first);
    expect(following.kind === 'following' && (await following.done)).toBe('ended');
    expect(followed).toEqual(expected(1_901, 2_001));
    expect(await log.read(first, 1_950)).toEqual({ kind: 'frames', ended: true, frames: expected(1_951, 2_001) });
    // The next answer writes where the ended one did: it reads its own frames only.
    for (let i = 1; i <= 30; i++) log.append(second, { type: 'delta', text: text(i) });
    await log.flush();
    expect(await log.read(second, 0)).toEqual({ kind: 'frames', ended: false, frames: expected(1, 30) });
    expect(await store.stats()).toMatchObject({ answers: 2, entries: 700 + 30 });
  });

  it('keeps all answers under maxTotalBytes, dropping ended answers first', async () => {
    const frame = { type: 'delta', text: 'x'.repeat(2000) } as const;
    // Each frame costs about 2 KB here (its UTF-8 text, one byte a character): room for about 60.
    const log = await unit({ maxTotalBytes: 125_000 }).open();
    const [ended, running] = [answerId(), answerId()];
    for (let i = 0; i < 30; i++) log.append(ended, frame);
    await log.end(ended);
    for (let i = 0; i < 40; i++) log.append(running, frame);
    await log.flush();
    expect((await store.stats()).bytes).toBeLessThanOrEqual(125_000);
    expect(await log.read(ended, 0)).toEqual({ kind: 'expired' });
    const kept = await log.read(running, 0);
    expect(kept.kind === 'frames' && kept.frames.length).toBe(40);
    // Past the bound with nothing ended left: the running answer loses its oldest frames.
    for (let i = 0; i < 40; i++) log.append(running, frame);
    await log.flush();
    const stats = await store.stats();
    expect(stats.bytes).toBeLessThanOrEqual(125_000);
    expect(await log.read(running, 0)).toMatchObject({ kind: 'truncated' });
    expect(stats.entries).toBeGreaterThan(50);
  });
});

/** An answer's frames as the service sends them, with these text pieces. */
const answerFrames = (texts: string[]): SseFrame[] => [
  { type: 'started', historyId: 'h'.repeat(24), conversationId: 'c'.repeat(24) },
  ...texts.map((text) => ({ type: 'stream' as const, prompt: text, delta: text })),
  // A piece whose two fields differ is kept as it came.
  { type: 'stream', prompt: 'the whole answer', delta: 'answer' },
  { type: 'tool', name: 'search', status: 'started' },
  { type: 'complete', success: true, usage: 12, outputs: [{ text: 'a "quoted" answer' }] },
  { type: 'done' },
];
const awkwardTexts = ['plain ', '', ' ', 'a "quote" \\ and a\nnewline', '","delta":"', '\u2028\u2029', 'é 漢字 🙂 👍🏽', '{"type":"stream"}', '5', 'x'.repeat(5000)];

describe('the frame lines on the memory store (a text piece kept as its text alone)', () => {
  const log = (options: MemoryStoreOptions) => {
    const store = createMemoryFrameStore(options);
    return { store, log: new StreamLog<SseFrame>(store, { encode: storedJsonOf }) };
  };

  it('gives back every frame as the same text, running and ended, whatever the piece holds', async () => {
    const frames = answerFrames(awkwardTexts);
    const { store, log: frameLog } = log({ lines: storedFrameLines });
    const id = answerId();
    frames.slice(0, 6).forEach((frame) => frameLog.append(id, frame));
    await frameLog.flush();
    const expected = (from: number, to: number) => frames.slice(from, to).map((frame, i) => ({ seq: from + 1 + i, json: storedJsonOf(frame) }));
    expect(await store.read(id, 0)).toEqual({ kind: 'frames', ended: false, frames: expected(0, 6) });
    expect(await store.read(id, 3)).toEqual({ kind: 'frames', ended: false, frames: expected(3, 6) });
    frames.slice(6).forEach((frame) => frameLog.append(id, frame));
    await frameLog.end(id);
    expect(await store.read(id, 0)).toEqual({ kind: 'frames', ended: true, frames: expected(0, frames.length) });
    expect(await store.read(id, 9)).toEqual({ kind: 'frames', ended: true, frames: expected(9, frames.length) });
    const decoded = await frameLog.read(id, 0);
    expect(decoded.kind === 'frames' && decoded.frames.map((logged) => logged.frame)).toEqual(frames.map((frame) => JSON.parse(storedJsonOf(frame))));
    // Lines the store did not pack come back as they are.
    expect(storedFrameLines.unpack('{"type":"done"}')).toBe('{"type":"done"}');
    expect(storedFrameLines.pack('{"type":"stream","prompt":5,"delta":5}')).toBe('{"type":"stream","prompt":5,"delta":5}');
  });

  it('holds several times the ended answers under the same bound', async () => {
    const bound = 150_000;
    const [plain, packed] = [log({ maxTotalBytes: bound }), log({ maxTotalBytes: bound, lines: storedFrameLines })];
    const ids = Array.from({ length: 100 }, () => answerId());
    for (const { log: frameLog } of [plain, packed]) {
      for (const id of ids) {
        answerFrames(Array.from({ length: 40 }, (_, i) => `word${i} `)).forEach((frame) => frameLog.append(id, frame));
        await frameLog.end(id);
      }
    }
    const [plainStats, packedStats] = [await plain.store.stats(), await packed.store.stats()];
    // Each answer costs about 2.5 KB as it came (its frames' JSON) and about 0.75 KB as lines.
    expect(plainStats.answers).toBeLessThan(70);
    expect(packedStats.answers).toBe(100);
    expect(packedStats.bytes / packedStats.answers).toBeLessThan((plainStats.bytes / plainStats.answers) / 3);
    expect(await plain.store.read(ids[0], 0)).toEqual({ kind: 'expired' });
    expect(await packed.store.read(ids[0], 0)).toMatchObject({ kind: 'frames', ended: true });
  });
});

describe.skipIf(!redisUrl)('stream log on Redis streams', () => {
  const logs: Array<StreamLog<TestFrame>> = [];
  const connections: Redis[] = [];
  let prefix = '';

  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
    // The test's streams, ended or not, go with it (a running one would otherwise stay for hours).
    const keys = prefix && connections[0] ? await connections[0].keys(`${prefix}*`) : [];
    if (keys.length > 0) await connections[0].del(...keys);
    for (const connection of connections.splice(0)) await connection.quit();
  });

  async function connect(): Promise<Redis> {
    const connection = new Redis(redisUrl!, { lazyConnect: true });
    connections.push(connection);
    await connection.connect();
    return connection;
  }

  /** Each open() is a process of its own: its own command connection, store and blocking reader. */
  function unit(storeOptions: RedisStoreOptions = {}): LogUnderTest {
    prefix = `test:stream-log:${randomBytes(6).toString('hex')}:`;
    return {
      async open(options?: StreamLogOptions) {
        const log = new StreamLog<TestFrame>(createRedisFrameStore(await connect(), { prefix, ...storeOptions }), options);
        logs.push(log);
        return log;
      },
    };
  }

  /** Counts, from outside, the commands Redis receives on this test's keys. */
  async function monitor(): Promise<{ commands: string[][]; stop(): Promise<void> }> {
    const connection = new Redis(redisUrl!);
    const watcher = await connection.monitor();
    const commands: string[][] = [];
    watcher.on('monitor', (_time: string, args: string[]) => {
      if (args.some((arg) => typeof arg === 'string' && arg.startsWith(prefix))) commands.push(args);
    });
    return {
      commands,
      async stop() {
        watcher.disconnect();
        connection.disconnect();
      },
    };
  }

  describe('contract', () => {
    streamLogContract(() => unit());
  });

  it('writes 100 frames appended in one tick with one XADD, not 100, and all answers of a flush in one call', async () => {
    const log = await unit().open({ flushMs: 10_000 });
    const watch = await monitor();
    const id = answerId();
    const other = answerId();
    try {
      for (let i = 1; i <= 100; i++) log.append(id, delta(i));
      await log.flush();
      for (let i = 101; i <= 150; i++) log.append(id, delta(i));
      log.append(id, { type: 'done' });
      log.append(other, delta(1));
      log.append(other, { type: 'done' });
      await Promise.all([log.end(id), log.end(other)]);
      // MONITOR reports each command after it ran, in order: once a later marker command shows, all have.
      const marker = `${prefix}marker`;
      await connections[0].exists(marker);
      await until(() => watch.commands.some((args) => args.includes(marker)));
    } finally {
      await watch.stop();
    }
    const names = watch.commands.filter((args) => !args.includes(`${prefix}marker`)).map((args) => args[0].toLowerCase());
    // Two flushes, each one script call: the first answer's two entries, the running TTL once, the
    // retention and the expired marker at the end; the second answer's one entry (its first is its end).
    expect(names.filter((name) => name === 'evalsha' || name === 'eval')).toHaveLength(2);
    expect(names.filter((name) => !name.startsWith('eval')).sort()).toEqual(['pexpire', 'pexpire', 'pexpire', 'set', 'set', 'xadd', 'xadd', 'xadd']);
    const read = await log.read(id, 0);
    expect(read.kind === 'frames' && read.frames.length).toBe(151);
    expect(await log.read(other, 0)).toMatchObject({ kind: 'frames', ended: true, frames: [{ seq: 1 }, { seq: 2 }] });
  });

  it("keeps a text piece as its text alone in field l, gives every frame back as the same text, and reads what was stored as it came", async () => {
    prefix = `test:stream-log:${randomBytes(6).toString('hex')}:`;
    const raw = await connect();
    const stores = { packed: createRedisFrameStore(await connect(), { prefix, lines: storedFrameLines }), plain: createRedisFrameStore(await connect(), { prefix }) };
    const frames = answerFrames([...awkwardTexts, ...Array.from({ length: 40 }, (_, i) => `word${i} `)]);
    const expected = frames.map((frame, i) => ({ seq: i + 1, json: storedJsonOf(frame) }));
    const ids = { packed: answerId(), plain: answerId() };
    for (const kind of ['packed', 'plain'] as const) {
      const log = new StreamLog<SseFrame>(stores[kind], { encode: storedJsonOf });
      frames.slice(0, 8).forEach((frame) => log.append(ids[kind], frame));
      await log.flush();
      frames.slice(8).forEach((frame) => log.append(ids[kind], frame));
      await log.end(ids[kind]);
      await log.close();
    }
    const fieldsOf = async (id: string) => (await raw.xrange(`${prefix}${id}`, '-', '+')).flatMap(([, fields]) => fields);
    const [packedFields, plainFields] = [await fieldsOf(ids.packed), await fieldsOf(ids.plain)];
    expect(packedFields.filter((_, i) => i % 2 === 0)).toEqual(['l', 'l', 'e']);
    expect(plainFields.filter((_, i) => i % 2 === 0)).toEqual(['t', 't', 'e']);
    const bytes = (fields: string[]) => fields.reduce((sum, field) => sum + Buffer.byteLength(field), 0);
    expect(bytes(packedFields)).toBeLessThan(bytes(plainFields) - 40 * 40);
    // Both read back the same frames from either kind of entry (answers stored before the lines were given).
    for (const store of [stores.packed, stores.plain]) {
      expect(await store.read(ids.plain, 0)).toEqual({ kind: 'frames', ended: true, frames: expected });
      expect(await store.read(ids.plain, 20)).toEqual({ kind: 'frames', ended: true, frames: expected.slice(20) });
    }
    expect(await stores.packed.read(ids.packed, 0)).toEqual({ kind: 'frames', ended: true, frames: expected });
    const followed: string[] = [];
    const following = await stores.packed.follow(ids.packed, 5, (batch) => followed.push(...batch.map((frame) => frame.json)));
    expect(following.kind === 'following' && (await following.done)).toBe('ended');
    expect(followed).toEqual(expected.slice(5).map((frame) => frame.json));
    await Promise.all([stores.packed.close(), stores.plain.close()]);
  });

  it('bounds a stream with MAXLEN ~ and says a resume from before what is kept has a gap', async () => {
    const subject = unit({ maxEntries: 10 });
    const log = await subject.open({ flushMs: 10_000 });
    const id = answerId();
    for (let i = 1; i <= 400; i++) {
      log.append(id, delta(i));
      await log.flush();
    }
    const stats = await log.store.stats();
    // Redis trims whole nodes (100 entries each by default): the bound is approximate but holds.
    expect(stats.answers).toBe(1);
    expect(stats.entries).toBeLessThanOrEqual(10 + 100);
    expect(stats.bytes).toBeGreaterThan(0);
    const first = await log.read(id, 0);
    expect(first).toMatchObject({ kind: 'truncated' });
    const recent = await log.read(id, 395);
    expect(recent.kind === 'frames' && recent.frames.map((frame) => frame.seq)).toEqual([396, 397, 398, 399, 400]);
  });

  it('serves many followers of many answers on one blocking connection, each to its end', async () => {
    const subject = unit();
    const producer = await subject.open({ flushMs: 2 });
    const reader = await subject.open();
    const ids = Array.from({ length: 12 }, () => answerId());
    const received = new Map(ids.map((id) => [id, [] as number[]]));
    const follows = [];
    for (const [index, id] of ids.entries()) {
      for (let i = 1; i <= 3; i++) producer.append(id, delta(i));
      await producer.flush();
      const following = await reader.follow(id, index % 3, (frame) => received.get(id)!.push(frame.seq));
      if (following.kind !== 'following') throw new Error(following.kind);
      follows.push(following.done);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    for (let round = 4; round <= 30; round++) {
      for (const id of ids) producer.append(id, delta(round));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(ids.map((id) => producer.end(id)));
    expect(await Promise.all(follows)).toEqual(ids.map(() => 'ended'));
    for (const [index, id] of ids.entries()) {
      expect(received.get(id)).toEqual(Array.from({ length: 30 - (index % 3) }, (_, i) => (index % 3) + 1 + i));
    }
  });
});

describe('a log that keeps nothing (STREAM_LOG=off, for the bench only)', () => {
  it('numbers frames as the log does, and every answer reads as unknown', async () => {
    const log = new StreamLog<TestFrame>(createNullFrameStore(), { keep: false });
    const id = answerId();
    expect([log.append(id, delta(1)), log.append(id, delta(2)), log.append(id, { type: 'done' })]).toEqual([1, 2, 3]);
    await log.end(id);
    expect(await log.read(id, 0)).toEqual({ kind: 'unknown' });
    expect(await log.follow(id, 0, () => undefined)).toEqual({ kind: 'unknown' });
    expect(log.append(id, delta(1))).toBe(1);
    await log.close();
  });
});
