// bench/stream-overhead: what the service adds to a streamed answer, started as a deployment runs it
// (bench/support/service-process.ts: `npm start`'s command, the default log level, people made through
// the admin routes). The fake model (its own process) streams BENCH_CHUNKS (40) pieces BENCH_GAP_MS
// (25) ms apart; BENCH_LEVELS (100,1000) clients in a closed loop (each asks again as soon as its
// answer completes; first starts spread over one answer) read for BENCH_WINDOW_MS (10 s), after
// BENCH_WARM_MS (10 s) of the same load unmeasured, each of:
// the model directly (the baseline), a bare node:http relay (bench/servers/relay.ts), the service's SSE
// route and its Socket.IO route, clients spread over BENCH_PEOPLE (20) people. Added = through it minus
// directly. Targets: at 100 clients added first chunk p50 ≤ 5 ms, p99 ≤ 25 ms, between chunks p99 ≤ 10
// ms; at 1,000 the service adds at most 1.5x what the bare relay adds; at both, the service's CPU an answer
// at most 1.5x the bare relay's in the same round (and against the floor with BENCH_FLOOR=1). Median of
// BENCH_ROUNDS (3).
//   npm run bench:stream                                    (embedded shape)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:stream
//   BENCH_PROFILE=/tmp/prof …  (the service's CPU profiles)   BENCH_WATCH=1 … (its GC pauses and busy share)
//   BENCH_LOG=/tmp/service.log … (keep the service's log; default /dev/null)
//   BENCH_FLOOR=1 … also the relay plus the two rows a turn writes, on the same database as the service
//     (bench/servers/record-relay.ts): the floor under any service that records its turns there
//   BENCH_THREADS=1 … the CPU an answer of each thread of the relay's, the floor's and the service's processes
//     (main, then the others by CPU, each by its place after the main thread: on Node 20 V8's
//     background thread is +2, the embedded database's thread +8)
//   BENCH_STREAM_LOG=compare … the answer frame log's cost: a second service with STREAM_LOG=off, measured
//     in the same rounds (on and off alternating which goes first); added first chunk p50/p99 and service
//     CPU per answer with the log on and off and their ratio (target: within 5%); with Redis, its memory
//     per running answer (MEMORY USAGE of the running answers' streams, sampled every 2 s, / their number)
// Figures: docs/performance.md ("bench:stream").
import { fork, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { combine, type ProcessFigures } from './servers/process-figures.js';
import { closedLoop, type LoopResult } from './support/closed-loop.js';
import { createPeople } from './support/people.js';
import { cpuOf, startService, threadUseOf, type ServiceProcess, type ThreadUse } from './support/service-process.js';
import { connectSockets, direct, script, viaSocket, viaSse, type Timing } from './support/stream-clients.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 40);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 25);
const ANSWER_MS = CHUNKS * GAP_MS;
const LEVELS = (process.env.BENCH_LEVELS ?? '100,1000').split(',').map(Number).filter((level) => level > 0);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 10_000);
/**
 * Each measured window follows a warm-up of the same load on the same server, not counted. A server idle
 * for the other servers' runs has lost much of its optimised code when the load comes back (most likely
 * V8 dropping code whose object shapes were collected), and recompiles it over its next 10 to 15 s.
 * Without this, each window held the service's warming (0.7 to 0.8 s of a background core's compiling a window, about
 * 0.75 ms an answer at 100 clients) and hardly any of the small relay's. 0 measures from a cold start.
 */
const WARM_MS = Number(process.env.BENCH_WARM_MS ?? 10_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const PEOPLE = Math.max(1, Number(process.env.BENCH_PEOPLE ?? 20));
const TRANSPORTS = (process.env.BENCH_TRANSPORTS ?? 'sse,socket').split(',');
const PROFILE_DIR = process.env.BENCH_PROFILE;
const WATCH_DIR = process.env.BENCH_WATCH ? mkdtempSync(path.join(os.tmpdir(), 'dt-watch-')) : undefined;
const FLOOR = process.env.BENCH_FLOOR === '1';
const THREADS = process.env.BENCH_THREADS === '1';
const COMPARE = process.env.BENCH_STREAM_LOG === 'compare';
const REDIS_URL = process.env.BENCH_DATABASE_URL ? process.env.BENCH_REDIS_URL : undefined;
/** A running answer's stream expires in hours (its running TTL); an ended one within its retention (minutes). */
const RUNNING_TTL_FLOOR_MS = 3_600_000;
const TARGET = { first50: 5, first99: 25, gap99: 10, relayRatio: 1.5, cpuRatio: 1.5 };

function startChild(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, 'servers', script), { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ child, url: message.url }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
/** The median; of an even count, the mean of the two middle values (of 2 rounds, not the larger). */
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const f = (ms: number) => `${ms.toFixed(1)} ms`;
const EXPECTED_TEXT = script(CHUNKS);

interface Figures {
  first50: number;
  first99: number;
  gap99: number;
  /** CPU of what serves the stream, ms per answer (measure's). */
  cpuPerAnswer?: number;
}

function figuresOf(turns: Timing[]): Figures {
  return { first50: percentile(turns.map((t) => t.first), 50), first99: percentile(turns.map((t) => t.first), 99), gap99: percentile(turns.flatMap((t) => t.gaps), 99) };
}

/** The service's GC pauses and busy share since the last call (BENCH_WATCH), worst process. */
async function watched(service: ServiceProcess): Promise<ProcessFigures | undefined> {
  if (!WATCH_DIR) return undefined;
  const files = service.pids().map((pid) => path.join(WATCH_DIR, `${pid}.json`));
  files.forEach((file) => rmSync(file, { force: true }));
  service.pids().forEach((pid) => process.kill(pid, 'SIGUSR2'));
  for (let i = 0; i < 40 && !files.every((file) => existsSync(file)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return combine(files.filter((file) => existsSync(file)).map((file) => JSON.parse(readFileSync(file, 'utf8')) as ProcessFigures));
}

type Name = 'direct' | 'relay' | 'floor' | 'sse' | 'socket' | 'sseOff' | 'socketOff';
const LABEL: Record<Name, string> = {
  direct: 'model directly',
  relay: 'bare relay',
  floor: 'relay + records',
  sse: COMPARE ? 'SSE, log on' : 'service SSE',
  socket: COMPARE ? 'Socket.IO, log on' : 'service Socket.IO',
  sseOff: 'SSE, log off',
  socketOff: 'Socket.IO, log off',
};

async function measure(name: Name, clients: number, run: (client: number) => Promise<Timing>, service?: ServiceProcess): Promise<Figures> {
  if (service) await watched(service);
  const pid = { relay: relay.child.pid, floor: floor?.child.pid }[name as 'relay' | 'floor'] ?? model.child.pid!;
  const cpuUsed = service ? () => service.cpuMs() : () => cpuOf(pid);
  if (WARM_MS > 0) await closedLoop(clients, ANSWER_MS, WARM_MS, run);
  const cpuBefore = cpuUsed();
  const threadPids = !THREADS || name === 'direct' ? [] : service ? service.pids() : [pid];
  const threadsBefore = threadPids.map((each) => threadUseOf(each));
  const result: LoopResult = await closedLoop(clients, ANSWER_MS, WINDOW_MS, run);
  const figures = figuresOf(result.turns);
  const complete = result.turns.filter((t) => t.chunks === CHUNKS && t.text === EXPECTED_TEXT).length;
  const errors = result.errors.length ? ` | ${result.errors.length} failed (${[...new Set(result.errors)].slice(0, 2).join('; ')})` : '';
  console.log(
    `    ${LABEL[name].padEnd(18)} ${result.rate.toFixed(0)} turns/s, ${complete}/${result.turns.length} complete | first chunk p50 ${f(figures.first50)} p99 ${f(figures.first99)} | between chunks p99 ${f(figures.gap99)}${errors}`,
  );
  // CPU of what serves the stream (the model, the relay, the service's processes), per answer.
  const cpu = cpuUsed() - cpuBefore;
  const gc = service && (await watched(service));
  const more = gc ? `; busiest second ${(gc.busiestSecond * 100).toFixed(0)}%, GC ${gc.gc.minor.count} minor (longest ${f(gc.gc.minor.longest)}), ${gc.gc.major.count} full (longest ${f(gc.gc.major.longest)})` : '';
  const cpuPerAnswer = cpu / Math.max(1, result.turns.length);
  console.log(`      ${service ? 'service' : name === 'direct' ? 'model' : name} CPU ${(cpu / 1000).toFixed(1)} s, ${cpuPerAnswer.toFixed(2)} ms per answer${more}`);
  if (threadPids.length) console.log(`      threads, ms (wake-ups) an answer: ${threadPids.map((each, i) => threadsLine(each, threadsBefore[i]!, result.turns.length)).join(' | ')}`);
  return { ...figures, cpuPerAnswer };
}

/**
 * A process's threads' CPU an answer over a run, and in brackets their wake-ups an answer: `main`, then
 * the others, highest CPU first (those above 0.01 ms), each by its place after the main thread (node
 * names none of its threads).
 */
function threadsLine(pid: number, before: Map<number, ThreadUse>, answers: number): string {
  const per = Math.max(1, answers);
  const used = [...threadUseOf(pid)].map(([tid, use]) => {
    const was = before.get(tid) ?? { cpuMs: 0, wakes: 0 };
    return { tid, ms: (use.cpuMs - was.cpuMs) / per, wakes: (use.wakes - was.wakes) / per };
  });
  const shown = (each: { ms: number; wakes: number }) => `${each.ms.toFixed(2)} (${each.wakes.toFixed(1)})`;
  const main = used.find((each) => each.tid === pid) ?? { ms: 0, wakes: 0 };
  const others = used.filter((each) => each.tid !== pid && each.ms >= 0.01).sort((a, b) => b.ms - a.ms);
  return `${pid}: main ${shown(main)}${others.map((each) => `, +${each.tid - pid} ${shown(each)}`).join('')}`;
}

const added = (through: Figures, direct: Figures): Figures => ({ first50: through.first50 - direct.first50, first99: through.first99 - direct.first99, gap99: through.gap99 - direct.gap99 });

const model = await startChild('fake-model.ts', { BENCH_CHUNKS: String(CHUNKS), BENCH_GAP_MS: String(GAP_MS) });
const relay = await startChild('relay.ts', { BENCH_MODEL_URL: model.url });
const floor = FLOOR ? await startChild('record-relay.ts', { BENCH_MODEL_URL: model.url }) : undefined;
const nodeArgs = [
  ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []),
  // The service runs compiled JavaScript; the watcher is TypeScript, so tsx's loader comes first.
  ...(WATCH_DIR ? ['--import', 'tsx', '--import', path.join(here, 'servers', 'watch.ts')] : []),
];
if (WATCH_DIR) process.env.BENCH_WATCH_DIR = WATCH_DIR;
const service = await startService({ modelUrl: model.url, nodeArgs }).catch((error: unknown) => {
  model.child.kill();
  relay.child.kill();
  floor?.child.kill();
  throw error;
});
const serviceOff = COMPARE
  ? await startService({ modelUrl: model.url, nodeArgs, env: { STREAM_LOG: 'off' } }).catch(async (error: unknown) => {
      await service.stop();
      model.child.kill();
      relay.child.kill();
      floor?.child.kill();
      throw error;
    })
  : undefined;
const redis = COMPARE && REDIS_URL ? new Redis(REDIS_URL) : undefined;
let ok = true;
try {
  const people = await createPeople(service.url, PEOPLE);
  const peopleOff = serviceOff ? await createPeople(serviceOff.url, PEOPLE) : [];
  console.log(
    `service: ${service.shape}, as npm start runs it (LOG_LEVEL default, log to ${service.logFile}); ${PEOPLE} people; ` +
      `answers of ${CHUNKS} pieces ${GAP_MS} ms apart; closed loop, ${WINDOW_MS / 1000} s measured; ${ROUNDS} round(s)`,
  );
  await closedLoop(10, ANSWER_MS, ANSWER_MS, (i) => viaSse(service.url, people[i % PEOPLE].token)); // warm-up
  if (serviceOff) await closedLoop(10, ANSWER_MS, ANSWER_MS, (i) => viaSse(serviceOff.url, peopleOff[i % PEOPLE].token));
  for (const level of LEVELS) {
    const rounds: Array<Partial<Record<Name, Figures>>> = [];
    const sockets = TRANSPORTS.includes('socket') ? await connectSockets(service.url, people, level) : [];
    const socketsOff = serviceOff && TRANSPORTS.includes('socket') ? await connectSockets(serviceOff.url, peopleOff, level) : [];
    const memory: RedisSample[] = [];
    console.log(`\n${level} clients`);
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`  round ${round}`);
      const r: Partial<Record<Name, Figures>> = {};
      r.direct = await measure('direct', level, () => direct(model.url));
      r.relay = await measure('relay', level, () => direct(relay.url));
      if (floor) r.floor = await measure('floor', level, () => direct(floor.url));
      // With BENCH_STREAM_LOG=compare, log on and off alternate which runs first, round after round.
      const modes = !serviceOff ? ['on'] : round % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
      for (const mode of modes) {
        const on = mode === 'on';
        const [target, who, socks] = on ? [service, people, sockets] : [serviceOff!, peopleOff, socketsOff];
        // Sampled in both modes, so the load its scans put on Redis falls on both alike; only the log-on
        // samples are kept.
        const sampler = redis ? sampleRedis(redis) : undefined;
        if (TRANSPORTS.includes('sse')) r[on ? 'sse' : 'sseOff'] = await measure(on ? 'sse' : 'sseOff', level, (i) => viaSse(target.url, who[i % PEOPLE].token), target);
        if (socks.length) r[on ? 'socket' : 'socketOff'] = await measure(on ? 'socket' : 'socketOff', level, (i) => viaSocket(target.url, who[i % PEOPLE].token, socks[i], CHUNKS), target);
        const samples = (await sampler?.stop()) ?? [];
        if (on) memory.push(...samples);
      }
      rounds.push(r);
    }
    sockets.forEach((socket) => socket.close());
    socketsOff.forEach((socket) => socket.close());
    verdict(level, rounds); // a missed target is a finding; a failed run is an error
    if (serviceOff) compareLog(rounds, memory);
  }
} catch (error) {
  console.error('bench failed:', error);
  ok = false;
} finally {
  await service.stop(); // SIGTERM: a --cpu-prof run writes its profiles on exit
  await serviceOff?.stop();
  redis?.disconnect();
  model.child.kill();
  relay.child.kill();
  floor?.child.kill();
  if (WATCH_DIR) rmSync(WATCH_DIR, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);

/** The medians of the rounds, and the targets: absolute at 100 clients, against the bare relay at 1,000. */
function verdict(level: number, rounds: Array<Partial<Record<Name, Figures>>>): void {
  const relayAdded = rounds.map((r) => added(r.relay!, r.direct!));
  const m = (values: Figures[], key: 'first50' | 'first99' | 'gap99') => median(values.map((v) => v[key]));
  const relay = { first50: m(relayAdded, 'first50'), first99: m(relayAdded, 'first99'), gap99: m(relayAdded, 'gap99') };
  console.log(`  median of ${ROUNDS}, added to the model read directly:`);
  console.log(`    bare relay         first chunk p50 ${f(relay.first50)} p99 ${f(relay.first99)} | between chunks p99 ${f(relay.gap99)}`);
  for (const name of ['floor', 'sse', 'socket'] as const) {
    if (!rounds[0][name]) continue;
    const a = rounds.map((r) => added(r[name]!, r.direct!));
    const s = { first50: m(a, 'first50'), first99: m(a, 'first99'), gap99: m(a, 'gap99') };
    let line = `    ${LABEL[name].padEnd(18)} first chunk p50 ${f(s.first50)} p99 ${f(s.first99)} | between chunks p99 ${f(s.gap99)}`;
    if (level >= 1000) {
      // A ratio to nothing says nothing: when the relay added nothing measurable (its figure at or below
      // the baseline's noise), the service's own added figure is the one to read.
      const ratio = (key: 'first50' | 'first99') => (relay[key] > 0.5 ? `${(s[key] / relay[key]).toFixed(1)}x` : 'n/a');
      const pass = s.first50 <= TARGET.relayRatio * Math.max(relay.first50, 0) && s.first99 <= TARGET.relayRatio * Math.max(relay.first99, 0);
      line += ` | ${ratio('first50')} (p50) and ${ratio('first99')} (p99) what the relay adds (target ≤ ${TARGET.relayRatio}x): ${pass ? 'met' : 'NOT met'}`;
    } else {
      const pass = s.first50 <= TARGET.first50 && s.first99 <= TARGET.first99 && s.gap99 <= TARGET.gap99;
      line += ` | targets (p50 ≤ ${TARGET.first50}, p99 ≤ ${TARGET.first99}, between p99 ≤ ${TARGET.gap99}): ${pass ? 'met' : 'NOT met'}`;
    }
    console.log(line);
  }
  cpuVerdict(rounds);
}

/**
 * The CPU an answer against the bare relay's in the same round (target ≤ 1.5x at every level), and against
 * the floor's when it was measured: each round's ratio, then their median.
 */
function cpuVerdict(rounds: Array<Partial<Record<Name, Figures>>>): void {
  const against = (name: Name, base: Name) => median(rounds.map((r) => (r[name]?.cpuPerAnswer ?? NaN) / (r[base]?.cpuPerAnswer ?? NaN)));
  const cpu = (name: Name) => median(rounds.map((r) => r[name]?.cpuPerAnswer ?? NaN));
  const floor = rounds[0].floor !== undefined;
  console.log(`  CPU an answer, median of ${ROUNDS}: bare relay ${cpu('relay').toFixed(2)} ms` + (floor ? `, relay + records ${cpu('floor').toFixed(2)} ms (${against('floor', 'relay').toFixed(2)}x the relay)` : ''));
  for (const name of ['sse', 'socket'] as const) {
    if (!rounds[0][name]) continue;
    const ratio = against(name, 'relay');
    console.log(
      `    ${LABEL[name].padEnd(18)} ${cpu(name).toFixed(2)} ms, ${ratio.toFixed(2)}x the relay` +
        (floor ? `, ${against(name, 'floor').toFixed(2)}x the floor` : '') +
        ` | target ≤ ${TARGET.cpuRatio}x the relay: ${ratio <= TARGET.cpuRatio ? 'met' : 'NOT met'}`,
    );
  }
}

/** The log on against off, medians of the rounds: added first chunk and service CPU per answer, and their ratio. */
function compareLog(rounds: Array<Partial<Record<Name, Figures>>>, memory: RedisSample[]): void {
  console.log(`  the answer frame log, on against off (median of ${ROUNDS}; target: within 5%):`);
  const ratio = (on: number, off: number) => (off > 0.05 ? `${(on / off).toFixed(3)}x` : 'n/a');
  for (const [on, off, label] of [['sse', 'sseOff', 'SSE'], ['socket', 'socketOff', 'Socket.IO']] as const) {
    if (!rounds[0][on] || !rounds[0][off]) continue;
    const m = (name: Name, pick: (figures: Figures) => number) => median(rounds.map((r) => pick(r[name]!)));
    const first = (name: Name, key: 'first50' | 'first99') => m(name, (figures) => figures[key]) - median(rounds.map((r) => r.direct![key]));
    const cpu = (name: Name) => m(name, (figures) => figures.cpuPerAnswer ?? NaN);
    const [p50On, p50Off, p99On, p99Off] = [first(on, 'first50'), first(off, 'first50'), first(on, 'first99'), first(off, 'first99')];
    // The same round's on and off ran a minute apart under the same load: the median of their ratios.
    const paired = median(rounds.map((r) => (r[on]!.cpuPerAnswer ?? NaN) / (r[off]!.cpuPerAnswer ?? NaN)));
    console.log(
      `    ${label.padEnd(10)} added first chunk p50 ${f(p50On)} on, ${f(p50Off)} off (${ratio(p50On, p50Off)}) | p99 ${f(p99On)} on, ${f(p99Off)} off (${ratio(p99On, p99Off)})` +
        ` | service CPU per answer ${cpu(on).toFixed(2)} ms on, ${cpu(off).toFixed(2)} ms off (${ratio(cpu(on), cpu(off))}; per round ${paired.toFixed(3)}x)`,
    );
  }
  if (memory.length === 0) return;
  const perAnswer = memory.filter((sample) => sample.running > 0).map((sample) => sample.bytes / sample.running);
  const running = memory.map((sample) => sample.running);
  console.log(
    `    Redis memory per running answer: median ${(median(perAnswer) / 1024).toFixed(1)} KiB, max ${(Math.max(...perAnswer) / 1024).toFixed(1)} KiB ` +
      `(${memory.length} samples, ${Math.min(...running)} to ${Math.max(...running)} answers running)`,
  );
}

interface RedisSample {
  running: number;
  bytes: number;
}


/**
 * Samples, every 2 s until stopped, the Redis memory of the streams of the answers running; streams
 * already running when it starts (an earlier run's, left by a crash) are not counted.
 */
function sampleRedis(client: Redis): { stop(): Promise<RedisSample[]> } {
  const samples: RedisSample[] = [];
  let stopped = false;
  const pause = () => new Promise((resolve) => setTimeout(resolve, 2_000));
  const loop = (async () => {
    const before = new Set<string>();
    await runningStreams(client, new Set(), before);
    for (await pause(); !stopped; await pause()) samples.push(await runningStreams(client, before));
  })().catch((error: unknown) => console.error('redis sampling failed:', error));
  return {
    async stop() {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

async function runningStreams(client: Redis, skip: Set<string>, seen?: Set<string>): Promise<RedisSample> {
  let cursor = '0';
  const sample = { running: 0, bytes: 0 };
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', 'stream-log:*', 'COUNT', 1000);
    cursor = next;
    const streams = keys.filter((key) => !key.endsWith(':gone'));
    if (streams.length === 0) continue;
    const ttls = ((await client.pipeline(streams.map((key) => ['pttl', key])).exec()) ?? []).map(([, ttl]) => Number(ttl));
    const running = streams.filter((key, i) => ttls[i] > RUNNING_TTL_FLOOR_MS && !skip.has(key));
    running.forEach((key) => seen?.add(key));
    if (running.length === 0) continue;
    const usage = (await client.pipeline(running.map((key) => ['memory', 'USAGE', key, 'SAMPLES', '0'])).exec()) ?? [];
    sample.running += running.length;
    sample.bytes += usage.reduce((sum, [, bytes]) => sum + Number(bytes ?? 0), 0);
  } while (cursor !== '0');
  return sample;
}
