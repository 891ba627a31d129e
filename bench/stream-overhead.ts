// bench/stream-overhead: what the service adds to a streamed answer. The fake model (its own process)
// streams BENCH_CHUNKS pieces BENCH_GAP_MS apart; a client here measures time to first chunk and the
// delay between chunks, directly from the fake model (baseline) and through the service, at 1, 100
// and 1,000 concurrent SSE streams and at 1,000 Socket.IO streams, and prints the added latency
// (p50/p99) and the ratio, per round and as the median of BENCH_ROUNDS rounds. The service answers on
// the real Q&A routes (records and charges included) and streams to a client of its own process.
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:stream
//   BENCH_RAMP_MS=0 …            (a burst: every stream of a level starts at the same instant)
//   BENCH_PROFILE=/tmp/prof …    (the service's CPU profile)
//   BENCH_NODE_ARGS='' …         (the service's node options; by default those of npm start)
//   BENCH_API_PROCESSES=1 …      (API processes; by default one per core on PostgreSQL + Redis, as the README advises)
// "Concurrent" means open together: by default each answer lasts 10 s (100 pieces 100 ms apart) and
// the starts of a level are spread over 10 s, so at 1,000 the service holds 1,000 open streams (10,000
// pieces a second) while 100 new turns a second start. A burst instead measures the queue of 1,000
// turns arriving in the same millisecond (one process admits them one after another).
// Figures and how they were taken: docs/decisions.md ("Stream overhead").
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ProcessFigures } from './servers/process-figures.js';
import { connectSockets, direct, script, viaSocket, viaSse, type Timing } from './support/stream-clients.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 100);
const LEVELS = (process.env.BENCH_LEVELS ?? '1,100,1000').split(',').map(Number).filter((level) => level > 0);
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
/** The starts of a level are spread evenly over this many ms (0: all at once, a burst). */
const RAMP_MS = Number(process.env.BENCH_RAMP_MS ?? 10_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SCENARIO_TIMEOUT_MS = 120_000 + RAMP_MS;
/** BENCH_PROFILE=<folder>: the service writes a CPU profile there when the run ends. */
const PROFILE_DIR = process.env.BENCH_PROFILE;
/** The service's node options: those of `npm start` (package.json), unless BENCH_NODE_ARGS says otherwise. */
const SERVICE_NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '--max-semi-space-size=16 --initial-old-space-size=512').split(' ').filter(Boolean);
/**
 * API processes of the service (API_PROCESSES, as the README advises: one per core; several need
 * PostgreSQL and Redis). With several, the service's figures are summed (CPU) or the worst process's.
 */
const SCALED = Boolean(process.env.BENCH_DATABASE_URL && process.env.BENCH_REDIS_URL);
const API_PROCESSES = Number(process.env.BENCH_API_PROCESSES ?? (SCALED ? os.availableParallelism() : 1));
/** The targets at 1,000 streams (ms). */
const TARGET = { first50: 5, first99: 25, gap99: 10 };

function start<T>(scriptName: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ child: ChildProcess } & T> {
  const child = fork(path.join(here, 'servers', scriptName), { execArgv: ['--import', 'tsx', ...nodeArgs], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    child.once('message', (message: T) => resolve({ child, ...message }));
    child.once('exit', (code) => reject(new Error(`${scriptName} exited with ${code}`)));
  });
}

async function concurrently(count: number, run: (index: number) => Promise<Timing>): Promise<Timing[]> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('scenario timed out')), SCENARIO_TIMEOUT_MS).unref());
  const startAt = (i: number) => (RAMP_MS > 0 ? new Promise((resolve) => setTimeout(resolve, (i * RAMP_MS) / count)) : Promise.resolve());
  return Promise.race([Promise.all(Array.from({ length: count }, (_, i) => startAt(i).then(() => run(i)))), timeout]);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const EXPECTED_TEXT = script(CHUNKS);

function summary(timings: Timing[]) {
  const firsts = timings.map((t) => t.first);
  const gaps = timings.flatMap((t) => t.gaps);
  const transits = timings.flatMap((t) => t.transits);
  const complete = timings.filter((t) => t.chunks === CHUNKS && t.text === EXPECTED_TEXT).length;
  return { first50: percentile(firsts, 50), first99: percentile(firsts, 99), gap50: percentile(gaps, 50), gap99: percentile(gaps, 99), transit50: percentile(transits, 50), transit99: percentile(transits, 99), complete };
}

interface Loop {
  p50: number;
  p99: number;
  max: number;
}

/** The service's event loop delay since the last call (ms): how long ready work waited for the process. */
async function loopDelay(): Promise<ProcessFigures> {
  const reply = new Promise<ProcessFigures>((resolve) => {
    const onMessage = (message: { loop?: ProcessFigures }) => {
      if (!message.loop) return;
      service.child.off('message', onMessage);
      resolve(message.loop);
    };
    service.child.on('message', onMessage);
  });
  service.child.send('loop-report');
  const delay = await reply;
  service.child.send('loop-reset');
  return delay;
}

/** This process's own event loop delay: a late client stamps pieces late. */
const clientLoop = monitorEventLoopDelay({ resolution: 1 });
clientLoop.enable();

interface Round {
  added: { first50: number; first99: number; gap50: number; gap99: number; transit99: number };
  complete: boolean;
}

const f = (ms: number) => `${ms.toFixed(1)} ms`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function reportRound(round: number, count: number, service: Timing[], baseline: Timing[], loop: ProcessFigures, client: Loop): Round {
  const s = summary(service);
  const d = summary(baseline);
  const added = { first50: s.first50 - d.first50, first99: s.first99 - d.first99, gap50: s.gap50 - d.gap50, gap99: s.gap99 - d.gap99, transit99: s.transit99 - d.transit99 };
  console.log(`  round ${round}: ${s.complete}/${count} complete and in order (baseline ${d.complete}/${count})`);
  console.log(`    first chunk    direct p50 ${f(d.first50)} p99 ${f(d.first99)} | service p50 ${f(s.first50)} p99 ${f(s.first99)} | added p50 ${f(added.first50)} p99 ${f(added.first99)} | ratio p50 ${(s.first50 / d.first50).toFixed(2)}x`);
  console.log(`    between chunks direct p50 ${f(d.gap50)} p99 ${f(d.gap99)} | service p50 ${f(s.gap50)} p99 ${f(s.gap99)} | added p50 ${f(added.gap50)} p99 ${f(added.gap99)}`);
  console.log(`    model to client direct p50 ${f(d.transit50)} p99 ${f(d.transit99)} | service p50 ${f(s.transit50)} p99 ${f(s.transit99)} | added p50 ${f(s.transit50 - d.transit50)} p99 ${f(s.transit99 - d.transit99)}`);
  console.log(`    event loop delay: service p50 ${f(loop.p50)} p99 ${f(loop.p99)} max ${f(loop.max)} | client p50 ${f(client.p50)} p99 ${f(client.p99)} max ${f(client.max)}`);
  const pieces = service.reduce((sum, t) => sum + t.chunks, 0);
  console.log(`    service CPU ${(loop.cpuMs / 1000).toFixed(2)} s (kernel ${(loop.systemMs / 1000).toFixed(2)} s): ${(loop.cpuMs / count).toFixed(2)} ms per answer, ${((loop.cpuMs * 1000) / Math.max(1, pieces)).toFixed(0)} µs per piece overall`);
  console.log(`    service main thread busy ${(loop.busy * 100).toFixed(0)}% of the scenario, ${(loop.busiestSecond * 100).toFixed(0)}% in its busiest second`);
  const { minor, major } = loop.gc;
  console.log(`    service GC pauses: ${minor.count} minor (longest ${f(minor.longest)}), ${major.count} full (longest ${f(major.longest)})`);
  return { added, complete: s.complete === count };
}

async function scenario(label: string, count: number, run: (index: number) => Promise<Timing>): Promise<boolean> {
  console.log(`\n${label}, ${count} concurrent`);
  const rounds: Round[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const baseline = await concurrently(count, () => direct(model.url));
    await loopDelay();
    clientLoop.reset();
    const measured = await concurrently(count, run);
    const client = { p50: clientLoop.percentile(50) / 1e6, p99: clientLoop.percentile(99) / 1e6, max: clientLoop.max / 1e6 };
    rounds.push(reportRound(round, count, measured, baseline, await loopDelay(), client));
  }
  const m = (key: keyof Round['added']) => median(rounds.map((r) => r.added[key]));
  const verdict =
    count >= 1000
      ? ` | targets (p50 ≤ ${TARGET.first50}, p99 ≤ ${TARGET.first99}, between p99 ≤ ${TARGET.gap99}): ` +
        (m('first50') <= TARGET.first50 && m('first99') <= TARGET.first99 && m('gap99') <= TARGET.gap99 ? 'met' : 'NOT met')
      : '';
  console.log(`  median of ${ROUNDS}: added first chunk p50 ${f(m('first50'))} p99 ${f(m('first99'))}; between chunks p50 ${f(m('gap50'))} p99 ${f(m('gap99'))}; model to client p99 ${f(m('transit99'))}${verdict}`);
  return rounds.every((r) => r.complete);
}

const model = await start<{ url: string }>('fake-model.ts', { BENCH_CHUNKS: String(CHUNKS), BENCH_GAP_MS: String(GAP_MS) });
const service = await start<{ port: number; token: string; userId: string; database: string; processes: number }>(
  'stream-service.ts',
  { BENCH_MODEL_URL: model.url, BENCH_API_PROCESSES: String(API_PROCESSES) },
  [...SERVICE_NODE_ARGS, ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [])],
);
const base = `http://127.0.0.1:${service.port}`;
console.log(
  `database: ${service.database}; API processes: ${service.processes}; ${CHUNKS} chunks ${GAP_MS} ms apart per answer; ` +
    (RAMP_MS > 0 ? `starts spread over ${RAMP_MS} ms` : 'all streams of a level start at once') +
    `; ${ROUNDS} round(s)`,
);
let ok = true;
try {
  await concurrently(5, () => viaSse(base, service.token)); // warm-up
  for (const level of LEVELS) ok = (await scenario('SSE', level, () => viaSse(base, service.token))) && ok;
  if (SOCKETS > 0) {
    const sockets = await connectSockets(base, service.token, service.userId, SOCKETS);
    ok = (await scenario('Socket.IO', SOCKETS, (i) => viaSocket(base, service.token, sockets[i], CHUNKS))) && ok;
    for (const socket of sockets) socket.close();
  }
} catch (error) {
  console.error('bench failed:', error);
  ok = false;
} finally {
  // Asked, the service exits by itself (so a --cpu-prof run writes its profile).
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.send('exit');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  service.child.kill();
  model.child.kill();
}
process.exit(ok ? 0 : 1);
