// bench/footprint: what the service takes as deployed (bench/support/service-process.ts: `npm start`'s
// command, the default log level). Start time from spawn to the first 200 on /api/test, on a fresh data
// folder (and database) and again on the same one after a stop (median of BENCH_STARTS, 3); resident
// memory (VmRSS of every process of the service: the primary and its children) after BENCH_SETTLE_MS
// (10 s) of rest; after 1,000 and 10,000 (BENCH_SOCKETS) idle Socket.IO connections (websocket transport,
// signed in and REGISTERed as the web client does, over BENCH_PEOPLE (20) people) → KB per socket; after
// a burst of 1,000 (BENCH_BURST) streamed answers through the SSE route, BENCH_BURST_CLIENTS (250) at a
// time, from the fake model (40 pieces 25 ms apart), and after 60 s (BENCH_REST_MS) of rest (a leak check),
// with the CPU the service spends in that rest (its first 20 s, then the rest of it).
// With BENCH_STEADY_SECONDS (0: none), then a steady load: BENCH_STEADY_CLIENTS (100) clients asking again
// as each answer ends (about 100 answers a second), read every BENCH_STEADY_EVERY_S (60) seconds, and once
// more after BENCH_REST_MS of rest: whether memory levels off under load (the frame log keeps each ended
// answer STREAM_RETENTION_SECONDS, 600, within its bound) and what the load leaves behind; and at the load's
// end, whether answers that ended 30 s, 1, 2, 3, 5, 7 and 10 minutes before can still be resumed (200) or
// have been dropped by the log's bound (410 STREAM_EXPIRED). With BENCH_REDIS_URL each reading also gives
// Redis's own memory (INFO's used_memory: the answers' frame logs are there on the scaled shape).
//   npm run bench:footprint                                    (embedded shape)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:footprint
//   BENCH_INSIDE=1 …  also where each process's memory goes (bench/servers/memory-probe.mjs)
//   BENCH_INSIDE=1 BENCH_COLLECT=1 …  with a full collection before every reading (the live heap; it lowers
//   the resident readings after it, so not for the figures of the targets)
// Targets: embedded at rest ≤ 300 MB, an API process of the scaled shape ≤ 150 MB, ≤ 5 KB per idle
// socket; start ≤ 3 s on an existing folder, ≤ 6 s on a fresh one. Figures: docs/performance.md.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createPeople } from './support/people.js';
import { removeLeftovers, startService, type ServiceProcess } from './support/service-process.js';
import { closedLoop } from './support/closed-loop.js';
import { connectSockets, resumeStatus, viaSse } from './support/stream-clients.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const STARTS = Math.max(1, Number(process.env.BENCH_STARTS ?? 3));
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 10_000);
const SOCKETS = (process.env.BENCH_SOCKETS ?? '1000,10000').split(',').map(Number).filter((n) => n > 0);
const PEOPLE = Math.max(1, Number(process.env.BENCH_PEOPLE ?? 20));
const BURST = Number(process.env.BENCH_BURST ?? 1000);
const BURST_CLIENTS = Number(process.env.BENCH_BURST_CLIENTS ?? 250);
const REST_MS = Number(process.env.BENCH_REST_MS ?? 60_000);
const STEADY_S = Number(process.env.BENCH_STEADY_SECONDS ?? 0);
const STEADY_CLIENTS = Number(process.env.BENCH_STEADY_CLIENTS ?? 100);
const STEADY_EVERY_S = Number(process.env.BENCH_STEADY_EVERY_S ?? 60);
const INSIDE_DIR = process.env.BENCH_INSIDE ? mkdtempSync(path.join(os.tmpdir(), 'dt-inside-')) : undefined;
if (INSIDE_DIR) process.env.BENCH_INSIDE_DIR = INSIDE_DIR;
if (INSIDE_DIR && process.env.BENCH_COLLECT) writeFileSync(path.join(INSIDE_DIR, 'collect'), '');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
const signed = (kb: number) => `${kb < 0 ? '-' : '+'}${mb(Math.abs(kb))}`;

/** VmRSS (KB) of each pid; 0 for one that is gone. */
function rssOf(pids: number[]): number[] {
  return pids.map((pid) => {
    try {
      return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return 0;
    }
  });
}

interface Reading {
  label: string;
  totalKb: number;
  perProcessKb: number[];
}
const readings: Reading[] = [];

const redis = process.env.BENCH_REDIS_URL ? new Redis(process.env.BENCH_REDIS_URL, { lazyConnect: true }) : undefined;

/** Redis's used_memory, for the scaled shape's readings. */
async function redisMemory(): Promise<string> {
  if (!redis) return '';
  const used = /used_memory:(\d+)/.exec(await redis.info('memory'))?.[1];
  return `; Redis ${mb(Number(used) / 1024)}`;
}

async function read(service: ServiceProcess, label: string): Promise<Reading> {
  const perProcessKb = rssOf(service.pids());
  const reading = { label, totalKb: perProcessKb.reduce((a, b) => a + b, 0), perProcessKb };
  readings.push(reading);
  console.log(`  ${label.padEnd(34)} ${mb(reading.totalKb).padStart(8)}  (${perProcessKb.map(mb).join(' + ')})${await redisMemory()}`);
  if (INSIDE_DIR) await inside(service);
  return reading;
}

/** BENCH_INSIDE: where each process's memory goes. */
async function inside(service: ServiceProcess): Promise<void> {
  const files = service.pids().map((pid) => path.join(INSIDE_DIR!, `${pid}.json`));
  files.forEach((file) => rmSync(file, { force: true }));
  service.pids().forEach((pid) => process.kill(pid, 'SIGUSR2'));
  for (let i = 0; i < 40 && !files.every((file) => existsSync(file)); i++) await sleep(50);
  for (const file of files.filter((f) => existsSync(f))) {
    const r = JSON.parse(readFileSync(file, 'utf8')) as {
      memory: NodeJS.MemoryUsage;
      live?: number;
      spaces: Record<string, { size: number; used: number }>;
      mappingsKb: { wasm: number; file: number; anonymous: number };
    };
    const m = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)}`;
    const spaces = Object.entries(r.spaces).filter(([, s]) => s.size > 2 ** 20).map(([name, s]) => `${name.replace('_space', '')} ${m(s.used)}/${m(s.size)}`).join(', ');
    console.log(
      `    pid ${path.basename(file, '.json')}: heap used/total ${m(r.memory.heapUsed)}/${m(r.memory.heapTotal)} MB${r.live === undefined ? '' : `, ${m(r.live)} MB live after a full collection`} (${spaces}); external ${m(r.memory.external)} MB, arrayBuffers ${m(r.memory.arrayBuffers)} MB; resident: WebAssembly ${mb(r.mappingsKb.wasm)}, files ${mb(r.mappingsKb.file)}, anonymous ${mb(r.mappingsKb.anonymous)}`,
    );
  }
}

/** BENCH_STEADY_SECONDS: a steady load read every BENCH_STEADY_EVERY_S seconds, then after BENCH_REST_MS of rest. */
async function steady(running: ServiceProcess, people: Array<{ token: string }>, before: Reading): Promise<void> {
  const started = performance.now();
  let reads = Promise.resolve();
  const timer = setInterval(() => {
    const seconds = Math.round((performance.now() - started) / 1000);
    reads = reads.then(() => read(running, `steady load, ${seconds} s`).then(() => undefined));
  }, STEADY_EVERY_S * 1000);
  // The answer's length (40 pieces 25 ms apart) is the loop's ramp: the load is steady from the first second.
  const ended: Array<{ at: number; historyId: string; token: string }> = [];
  const loop = await closedLoop(STEADY_CLIENTS, 1000, STEADY_S * 1000, async (client) => {
    const { token } = people[client % people.length];
    const timing = await viaSse(running.url, token);
    if (timing.historyId) ended.push({ at: performance.now(), historyId: timing.historyId, token });
    return timing;
  });
  clearInterval(timer);
  await reads;
  console.log(`  steady load: ${STEADY_CLIENTS} clients, ${loop.rate.toFixed(0)} answers a second for ${STEADY_S} s, ${loop.errors.length} failed`);
  const resumable: string[] = [];
  for (const age of [30, 60, 120, 180, 300, 420, 600].filter((seconds) => seconds < STEADY_S)) {
    const at = performance.now() - age * 1000;
    const answer = ended.find((candidate) => candidate.at >= at);
    if (answer) resumable.push(`${age} s: ${await resumeStatus(running.url, answer.token, answer.historyId)}`);
  }
  console.log(`  a resume of an answer that ended … before the load's end: ${resumable.join(', ')}`);
  const loaded = await read(running, 'at the end of the load');
  await sleep(REST_MS);
  const rested = await read(running, `${REST_MS / 1000} s after the load`);
  console.log(`  steady load ${signed(loaded.totalKb - before.totalKb)}, after rest ${signed(rested.totalKb - before.totalKb)} against before it`);
}

function startChild(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, 'servers', script), { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ child, url: message.url }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

const model = await startChild('fake-model.ts', { BENCH_CHUNKS: '40', BENCH_GAP_MS: '25' });
const nodeArgs = INSIDE_DIR ? ['--import', path.join(here, 'servers', 'memory-probe.mjs')] : [];
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(', ');
console.log(`bench:footprint, ${os.availableParallelism()} cores, load average ${load()} at the start`);

let service: ServiceProcess | undefined;
try {
  // Start times: fresh folder (and database), then the same again after a stop; the last one is measured.
  const fresh: number[] = [];
  const existing: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const first = await startService({ modelUrl: model.url, nodeArgs, keep: true });
    fresh.push(first.startMs);
    await first.stop();
    service = await startService({ modelUrl: model.url, nodeArgs, reuse: first });
    existing.push(service.startMs);
    if (i < STARTS - 1) {
      await service.stop();
      await removeLeftovers(first);
      service = undefined;
    } else {
      const leftovers = first;
      const running = service;
      const stop = running.stop.bind(running);
      running.stop = async () => {
        await stop();
        await removeLeftovers(leftovers);
      };
    }
  }
  const s = (ms: number[]) => `median ${(median(ms) / 1000).toFixed(2)} s (${ms.map((x) => (x / 1000).toFixed(2)).join(', ')})`;
  console.log(`${service!.shape}\n  start, fresh folder:    ${s(fresh)}\n  start, existing folder: ${s(existing)}`);
  const running = service!;

  await sleep(SETTLE_MS);
  const rest = await read(running, `at rest (${SETTLE_MS / 1000} s after start)`);
  const people = await createPeople(running.url, PEOPLE);
  await sleep(SETTLE_MS);
  const before = await read(running, `${PEOPLE} people signed in, no socket`);
  let open: Awaited<ReturnType<typeof connectSockets>> = [];
  const perSocket: string[] = [];
  for (const count of SOCKETS) {
    open.push(...(await connectSockets(running.url, people, count - open.length)));
    await sleep(SETTLE_MS);
    const held = await read(running, `${count} idle sockets`);
    perSocket.push(`${count}: ${((held.totalKb - before.totalKb) / count).toFixed(1)} KB per socket`);
  }
  open.forEach((socket) => socket.close());
  open = [];
  await sleep(SETTLE_MS);
  const beforeBurst = await read(running, 'sockets closed');

  let next = 0;
  let failed = 0;
  const burstStarted = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(BURST_CLIENTS, BURST) }, async (_, client) => {
      while (next < BURST) {
        next++;
        await viaSse(running.url, people[client % people.length].token).catch(() => failed++);
      }
    }),
  );
  console.log(`  burst: ${BURST} answers in ${((performance.now() - burstStarted) / 1000).toFixed(1)} s, ${failed} failed`);
  const afterBurst = await read(running, `after ${BURST} answers`);
  // The CPU of the rest: its first 20 s (the quiet collection's full collection comes in them) and the rest of it.
  const restCpu: string[] = [];
  let cpuBefore = running.cpuMs();
  for (const ms of REST_MS > 20_000 ? [20_000, REST_MS - 20_000] : [REST_MS]) {
    await sleep(ms);
    const cpuNow = running.cpuMs();
    restCpu.push(`${((cpuNow - cpuBefore) / (ms / 1000)).toFixed(1)} ms a second over ${ms / 1000} s`);
    cpuBefore = cpuNow;
  }
  if (INSIDE_DIR) writeFileSync(path.join(INSIDE_DIR, 'collect'), '');
  const rested = await read(running, `${REST_MS / 1000} s later`);
  console.log(`  sockets: ${perSocket.join('; ')}`);
  console.log(`  CPU of the rest after the burst: ${restCpu.join(', then ')}`);
  console.log(
    `  at rest ${mb(rest.totalKb)}; burst ${signed(afterBurst.totalKb - beforeBurst.totalKb)}, after rest ${signed(rested.totalKb - beforeBurst.totalKb)} against before the burst`,
  );
  if (STEADY_S > 0) await steady(running, people, rested);
  console.log(`load average ${load()} at the end`);
} finally {
  await service?.stop();
  model.child.kill();
  redis?.disconnect();
  if (INSIDE_DIR) rmSync(INSIDE_DIR, { recursive: true, force: true });
}
process.exit(0);
