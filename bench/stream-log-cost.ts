// bench/stream-log-cost: the answer frame log's own CPU per answer, as the service's producer uses it,
// in one process with nothing else in it. BENCH_ANSWERS (100) answers at once in a closed loop, each of
// BENCH_CHUNKS (40) text pieces BENCH_GAP_MS (25) ms apart plus started, complete and done, numbered by
// AnswerFrames as a turn numbers them (SSE: sseText, Socket.IO: number), with the log on and then off
// (STREAM_LOG=off: numbered, kept nowhere), alternating for BENCH_ROUNDS (4) rounds of BENCH_WINDOW_MS
// (5 s). CPU is this process's (process.cpuUsage; Redis's own is not in it), so a loaded machine slows
// the rounds but hardly moves the figure. On minus off is what the log adds to an answer; compare it
// with the service's CPU per answer (bench:stream). BENCH_HELD (0): ended answers the log holds before
// each round, as a service that has run for a while holds them for their retention (the memory ring
// holds about 20,000 such 40-frame answers at its 64 MB bound, their text off the heap).
//   npm run bench:stream-log-cost                                         (memory store)
//   BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:stream-log-cost  (Redis store)
//   BENCH_KEEP=on|off …  only that side's rounds (one process each, e.g. under node --trace-gc-nvp to read
//     the bytes each scavenge copies: node --trace-gc-nvp --import tsx bench/stream-log-cost.ts)
//   BENCH_SRC=<a source tree> …  the same with another version's src/ (a commit before, for an A/B)
// BENCH_GARBAGE_KB (0): short-lived memory allocated with each frame sent, the rest of a service's work
// (the service allocates about 500 KB an answer, about 12 KB a frame: docs/performance.md), so that young
// collections come as often as in the service and the frames the log holds meet as many of them.
// Each round also prints the young generation's collections (scavenges) per answer and their time per
// answer, from the process's GC performance entries: what the log's held frames cost the collector.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 100);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 40);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 25);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 5_000);
const SRC = path.resolve(process.env.BENCH_SRC ?? path.join(import.meta.dirname, '..', 'src'));
const redisUrl = process.env.BENCH_REDIS_URL;
const ONLY = process.env.BENCH_KEEP ? process.env.BENCH_KEEP === 'on' : undefined;
const HELD = Number(process.env.BENCH_HELD ?? 0);
/** Elements of the array allocated with each frame sent (8 bytes each), for BENCH_GARBAGE_KB. */
const GARBAGE_ELEMENTS = Math.round((Number(process.env.BENCH_GARBAGE_KB ?? 0) * 1024) / 8);

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

/** Scavenges (minor collections) seen so far: how many and their summed duration. */
const scavenges = { count: 0, ms: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (((entry as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind !== perfConstants.NODE_PERFORMANCE_GC_MINOR) continue;
    scavenges.count++;
    scavenges.ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

interface Sink {
  bytes: number;
  garbage?: number[];
}

/** One answer as a turn sends it: started, the pieces, complete, done; then the end. */
async function answer(log: Log, transport: 'sse' | 'socket', sink: Sink, gapMs = GAP_MS): Promise<void> {
  const historyId = randomBytes(12).toString('hex');
  const frames = new AnswerFrames(log, historyId);
  const send = (frame: Frame) => {
    // Kept on the sink until the next frame's, so the optimizer cannot leave it out.
    if (GARBAGE_ELEMENTS > 0) sink.garbage = new Array<number>(GARBAGE_ELEMENTS).fill(0);
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

interface Measure {
  /** CPU per answer, ms. */
  cpu: number;
  /** Scavenges per answer, and their time per answer (ms). */
  scavenges: number;
  scavengeMs: number;
}

async function round(keep: boolean, transport: 'sse' | 'socket', redis: Redis | undefined): Promise<Measure> {
  const log = openStreamLog({ redis }, 600, (error) => console.error(error), keep);
  const sink: Sink = { bytes: 0 };
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
  const gcFrom = { ...scavenges };
  await sleep(WINDOW_MS);
  const used = cpuMs() - from;
  // GC entries are queued to the observer: give them a turn to arrive.
  await sleep(0);
  const gc = { count: scavenges.count - gcFrom.count, ms: scavenges.ms - gcFrom.ms };
  measuring = false;
  stop = true;
  await Promise.all(clients);
  await log.close();
  return { cpu: used / done, scavenges: gc.count / done, scavengeMs: gc.ms / done };
}

const redis = redisUrl ? new Redis(redisUrl) : undefined;
console.log(
  `stream-log-cost: ${redis ? 'Redis' : 'memory'} store, src ${SRC}; ${ANSWERS} answers at once of ${CHUNKS} pieces ${GAP_MS} ms apart; ${HELD} ended answers held; ${(GARBAGE_ELEMENTS * 8) / 1024} KB allocated a frame sent; ${ROUNDS} rounds of ${WINDOW_MS / 1000} s`,
);
for (const transport of ['sse', 'socket'] as const) {
  const added: number[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    // On and off alternate which goes first.
    const order = (i % 2 === 1 ? [true, false] : [false, true]).filter((keep) => ONLY === undefined || keep === ONLY);
    const measured: Partial<Record<string, Measure>> = {};
    for (const keep of order) measured[String(keep)] = await round(keep, transport, redis);
    const [on, off] = [measured.true, measured.false];
    if (!on || !off) {
      const [side, only] = on ? ['on', on] : ['off', off!];
      console.log(`  ${transport} round ${i}: CPU per answer, log ${side} ${only.cpu.toFixed(3)} ms; scavenges per answer ${only.scavenges.toFixed(3)} (${only.scavengeMs.toFixed(3)} ms)`);
      continue;
    }
    added.push(on.cpu - off.cpu);
    console.log(
      `  ${transport} round ${i}: CPU per answer, log on ${on.cpu.toFixed(3)} ms, off ${off.cpu.toFixed(3)} ms, added ${(on.cpu - off.cpu).toFixed(3)} ms;` +
        ` scavenges per answer on ${on.scavenges.toFixed(3)} (${on.scavengeMs.toFixed(3)} ms), off ${off.scavenges.toFixed(3)} (${off.scavengeMs.toFixed(3)} ms)`,
    );
  }
  if (added.length === 0) continue;
  const sorted = [...added].sort((a, b) => a - b);
  console.log(`  ${transport}: the log adds a median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} ms of CPU per answer (rounds ${added.map((v) => v.toFixed(3)).join(', ')})`);
}
await redis?.quit();
