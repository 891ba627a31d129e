// bench/stream-log: what the answer frame log costs, on each store.
//   append   the producer's cost per frame (numbering and queueing; the only part on the live path)
//   resume   read(answerId, afterSeq) of a 1,000-frame answer, from its start and from its middle,
//            one reader at a time and BENCH_READERS (20) at once; p50/p99 beside, for Redis, a bare
//            XRANGE of the same stream on the same connection (the floor under any Redis resume)
//   follow   a follower joining a 1,000-frame answer at seq 0 until its end (replay, then the end)
//   memory   MEMORY USAGE of a running answer's stream (Redis), bytes held per answer (memory)
// Answers are written the way a slow model writes them: one entry per frame (every flush holds one
// frame: the worst case for the store), and batched 10 frames an entry.
//   npm run bench:stream-log                                                   (memory store)
//   BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:stream-log            (both stores)
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { StreamLog, type FrameStore } from '../src/platform/realtime/stream-log.js';
import { createMemoryFrameStore } from '../src/platform/realtime/stream-log.memory.js';
import { createRedisFrameStore } from '../src/platform/realtime/stream-log.redis.js';

const FRAMES = 1_000;
const READS = Number(process.env.BENCH_READS ?? 300);
const READERS = Number(process.env.BENCH_READERS ?? 20);
const redisUrl = process.env.BENCH_REDIS_URL;
const now = () => performance.now();

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
const figures = (values: number[]) => `p50 ${quantile(values, 0.5).toFixed(2)} ms, p99 ${quantile(values, 0.99).toFixed(2)} ms`;

/** A model's delta as the SSE route frames it: a few words and the answer's ids. */
const frame = (i: number) => ({ type: 'chunk', text: `word${i} and more `, historyId: 'a'.repeat(24), seq: i });

async function produce(log: StreamLog, framesPerEntry: number, ended: boolean): Promise<string> {
  const id = randomBytes(12).toString('hex');
  for (let i = 1; i <= FRAMES; i++) {
    log.append(id, frame(i));
    if (i % framesPerEntry === 0) await log.flush();
  }
  if (ended) await log.end(id);
  else await log.flush();
  return id;
}

async function timeReads(read: () => Promise<unknown>, count: number, concurrency: number): Promise<number[]> {
  const times: number[] = [];
  let left = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const start = now();
        await read();
        times.push(now() - start);
      }
    }),
  );
  return times;
}

async function benchStore(name: string, makeStore: () => Promise<FrameStore>, bare?: (id: string) => Promise<unknown>, memoryOf?: (id: string) => Promise<number>): Promise<void> {
  const producer = new StreamLog(await makeStore(), { flushMs: 10_000 });
  const reader = new StreamLog(await makeStore());

  // The producer's cost: 100,000 appends over 100 answers, beside the floor of making the same frames
  // and keeping them in an array (what any producer does), in the same run.
  const appendIds = Array.from({ length: 100 }, () => randomBytes(12).toString('hex'));
  const kept: unknown[] = [];
  let started = process.hrtime.bigint();
  for (let i = 1; i <= FRAMES; i++) for (const _ of appendIds) kept.push(frame(i));
  const floorNs = Number(process.hrtime.bigint() - started) / (FRAMES * appendIds.length);
  kept.length = 0;
  started = process.hrtime.bigint();
  for (let i = 1; i <= FRAMES; i++) for (const id of appendIds) producer.append(id, frame(i));
  const appendNs = Number(process.hrtime.bigint() - started) / (FRAMES * appendIds.length);
  started = process.hrtime.bigint();
  await Promise.all(appendIds.map((id) => producer.end(id)));
  const writeNs = Number(process.hrtime.bigint() - started) / (FRAMES * appendIds.length);
  console.log(`${name}: append ${appendNs.toFixed(0)} ns a frame on the producer's path (floor: make the frame and keep it, ${floorNs.toFixed(0)} ns); the flush, off that path, ${writeNs.toFixed(0)} ns a frame`);

  for (const perEntry of [1, 10]) {
    const id = await produce(producer, perEntry, true);
    const running = await produce(producer, perEntry, false);
    for (const [label, afterSeq] of [['from the start', 0], ['from the middle', FRAMES / 2]] as const) {
      const alone = await timeReads(() => reader.read(id, afterSeq), READS, 1);
      const together = await timeReads(() => reader.read(id, afterSeq), READS, READERS);
      const floor = bare ? `; bare XRANGE ${figures(await timeReads(() => bare(id), READS, 1))}` : '';
      console.log(`${name}, ${perEntry} frame(s) an entry, resume ${label}: alone ${figures(alone)}, ${READERS} at once ${figures(together)}${floor}`);
    }
    const follows = await timeReads(
      async () => {
        const following = await reader.follow(id, 0, () => undefined);
        if (following.kind !== 'following') throw new Error(following.kind);
        await following.done;
      },
      Math.min(READS, 100),
      1,
    );
    console.log(`${name}, ${perEntry} frame(s) an entry, follow a 1,000-frame ended answer from 0 to its end: ${figures(follows)}`);
    if (memoryOf) console.log(`${name}, ${perEntry} frame(s) an entry: MEMORY USAGE of a running 1,000-frame answer ${((await memoryOf(running)) / 1024).toFixed(1)} KiB`);
    await producer.end(running);
  }
  const stats = await producer.store.stats();
  console.log(`${name}: store holds ${stats.answers} answers, ${stats.entries} entries, ${(stats.bytes / 1024).toFixed(0)} KiB`);
  await producer.close();
  await reader.close();
}

async function main(): Promise<void> {
  const memory = createMemoryFrameStore();
  await benchStore('memory', async () => memory);
  if (!redisUrl) return console.log('Redis: set BENCH_REDIS_URL to measure the Redis store');
  const prefix = `bench:stream-log:${randomBytes(4).toString('hex')}:`;
  const connections: Redis[] = [];
  const connect = () => {
    const connection = new Redis(redisUrl);
    connections.push(connection);
    return connection;
  };
  const probe = connect();
  await benchStore(
    'redis',
    async () => createRedisFrameStore(connect(), { prefix }),
    (id) => probe.xrange(`${prefix}${id}`, '0-0', '+'),
    async (id) => Number(await probe.memory('USAGE', `${prefix}${id}`)),
  );
  let cursor = '0';
  do {
    const [next, keys] = await probe.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await probe.del(...keys);
  } while (cursor !== '0');
  for (const connection of connections) connection.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
