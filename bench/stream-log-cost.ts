// bench/stream-log-cost: the answer frame log's own CPU per answer, as the service's producer uses it,
// in one process with nothing else in it. BENCH_ANSWERS (100) answers at once in a closed loop, each of
// BENCH_CHUNKS (40) text pieces BENCH_GAP_MS (25) ms apart plus started, complete and done, numbered by
// AnswerFrames as a turn numbers them (SSE: sseText, Socket.IO: number), with the log on and then off
// (STREAM_LOG=off: numbered, kept nowhere), alternating for BENCH_ROUNDS (4) rounds of BENCH_WINDOW_MS
// (5 s). CPU is this process's (process.cpuUsage; Redis's own is not in it), so a loaded machine slows
// the rounds but hardly moves the figure. On minus off is what the log adds to an answer; compare it
// with the service's CPU per answer (bench:stream). BENCH_HELD (0): ended answers the log holds before
// each round, as a service that has run for a while holds them for their retention (the memory ring
// holds about 10,000 such 40-frame answers at its 64 MB bound); the collector marks what is held.
//   npm run bench:stream-log-cost                                         (memory store)
//   BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:stream-log-cost  (Redis store)
//   BENCH_SRC=<a source tree> …  the same with another version's src/ (a commit before, for an A/B)
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 100);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 40);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 25);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 5_000);
const SRC = path.resolve(process.env.BENCH_SRC ?? path.join(import.meta.dirname, '..', 'src'));
const redisUrl = process.env.BENCH_REDIS_URL;
const HELD = Number(process.env.BENCH_HELD ?? 0);

type Frame = Record<string, unknown> & { type: string };
interface Producer {
  sseText(frame: Frame): string;
  number(frame: Frame): number;
  end(): void;
}
interface Log {
  close(): Promise<void>;
}

const { AnswerFrames } = (await import(pathToFileURL(path.join(SRC, 'modules/conversations/answer-frames.ts')).href)) as {
  AnswerFrames: new (log: Log, historyId: string) => Producer;
};
const { openStreamLog } = (await import(pathToFileURL(path.join(SRC, 'platform/realtime/open-stream-log.ts')).href)) as {
  openStreamLog: (bus: { redis?: Redis }, retentionSeconds: number, onError?: (error: unknown) => void, keep?: boolean) => Log;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** One answer as a turn sends it: started, the pieces, complete, done; then the end. */
async function answer(log: Log, transport: 'sse' | 'socket', sink: { bytes: number }, gapMs = GAP_MS): Promise<void> {
  const historyId = randomBytes(12).toString('hex');
  const frames = new AnswerFrames(log, historyId);
  const send = (frame: Frame) => {
    if (transport === 'sse') sink.bytes += frames.sseText(frame).length;
    else sink.bytes += frames.number(frame);
  };
  send({ type: 'started', historyId, conversationId: 'c'.repeat(24) });
  for (let i = 0; i < CHUNKS; i++) {
    if (gapMs > 0) await sleep(gapMs);
    const piece = `word${i} and a few more `;
    send({ type: 'stream', prompt: piece, delta: piece });
  }
  send({ type: 'complete', success: true, usage: 120, outputs: ['the whole answer'], credits: 1, historyId, conversationId: 'c'.repeat(24) });
  send({ type: 'done' });
  frames.end();
}

async function round(keep: boolean, transport: 'sse' | 'socket', redis: Redis | undefined): Promise<number> {
  const log = openStreamLog({ redis }, 600, (error) => console.error(error), keep);
  const sink = { bytes: 0 };
  for (let i = 0; i < HELD; i++) await answer(log, 'sse', sink, 0);
  let done = 0;
  let measuring = false;
  let stop = false;
  const client = async (delay: number) => {
    await sleep(delay);
    while (!stop) {
      await answer(log, transport, sink);
      if (measuring) done++;
    }
  };
  const clients = Array.from({ length: ANSWERS }, (_, i) => client((i * (CHUNKS * GAP_MS)) / ANSWERS));
  await sleep(CHUNKS * GAP_MS * 2);
  measuring = true;
  const from = cpuMs();
  await sleep(WINDOW_MS);
  const used = cpuMs() - from;
  measuring = false;
  stop = true;
  await Promise.all(clients);
  await log.close();
  return used / done;
}

const redis = redisUrl ? new Redis(redisUrl) : undefined;
console.log(
  `stream-log-cost: ${redis ? 'Redis' : 'memory'} store, src ${SRC}; ${ANSWERS} answers at once of ${CHUNKS} pieces ${GAP_MS} ms apart; ${HELD} ended answers held; ${ROUNDS} rounds of ${WINDOW_MS / 1000} s`,
);
for (const transport of ['sse', 'socket'] as const) {
  const added: number[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    // On and off alternate which goes first.
    const order = i % 2 === 1 ? [true, false] : [false, true];
    const cpu: Record<string, number> = {};
    for (const keep of order) cpu[String(keep)] = await round(keep, transport, redis);
    added.push(cpu.true - cpu.false);
    console.log(`  ${transport} round ${i}: CPU per answer, log on ${cpu.true.toFixed(3)} ms, off ${cpu.false.toFixed(3)} ms, added ${(cpu.true - cpu.false).toFixed(3)} ms`);
  }
  const sorted = [...added].sort((a, b) => a - b);
  console.log(`  ${transport}: the log adds a median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} ms of CPU per answer (rounds ${added.map((v) => v.toFixed(3)).join(', ')})`);
}
await redis?.quit();
