// bench/http-overhead: requests per second of an authenticated JSON route (POST /api/user/refresh/profile)
// of the service started as a deployment runs it (bench/support/service-process.ts: `npm start`'s
// command, the default LOG_LEVEL, BENCH_PEOPLE people made through the admin routes, each connection
// cycling through them), against a bare Fastify hello-world, each in its own process; the load
// generator (autocannon) runs here. Target: at least 50% of bare Fastify's requests per second.
// BENCH_ALTERNATE=1: the alternating protocol (target 60%): bare, service, bare, service... (BENCH_ROUNDS
// pairs, default 3) of 10 s and 100 connections each, back to back from the service's start, no warm-up; every
// service run's ratio to the bare run just before it, and the service's CPU while the bare run had the
// load (its background work), its resident memory after each run.
//   npm run bench:http                                        (embedded shape)
//   BENCH_ALTERNATE=1 npm run bench:http
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:http
// BENCH_BASELINE=<another checkout> (with BENCH_ALTERNATE=1): that checkout's service started too (its own
// dist/, built as npm start builds it), and each round runs bare Fastify then the two services, in turns
// first, with the CPU a request of each: a same-run comparison of two commits on a busy machine.
// Figures: docs/performance.md ("bench:http").
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { createPeople } from './support/people.js';
import { cpuOf, startService } from './support/service-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ALTERNATE = process.env.BENCH_ALTERNATE === '1';
const DURATION = Number(process.env.BENCH_SECONDS ?? (ALTERNATE ? 10 : 8));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? (ALTERNATE ? 100 : 50));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PEOPLE = Math.max(1, Number(process.env.BENCH_PEOPLE ?? 20));

function startBare(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(path.join(here, 'servers', 'bare.ts'), { execArgv: ['--import', 'tsx'], env: process.env });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }));
    child.once('exit', (code) => reject(new Error(`bare.ts exited with ${code}`)));
  });
}

interface Load {
  rps: number;
  p99: number;
  errors: number;
  /** CPU time of the server's processes per request (µs): less moved by a busy machine than requests per second. */
  cpuPerRequest: number;
  /** The service's CPU (ms a second) during this run: its background work when the load went to bare Fastify. */
  serviceCpuPerSecond: number;
  /** The service's resident memory after the run, MB (the primary's). */
  serviceRssMb: number;
}

async function load(url: string, tokens: string[], cpuMs: () => number, warmUp = true): Promise<Load> {
  // Each connection sends one request per person in turn (autocannon cycles through `requests`).
  const requests = (tokens.length ? tokens : ['']).map((token) => ({ headers: token ? { 'content-type': 'application/json', 'x-access-token': token } : { 'content-type': 'application/json' } }));
  const run = (duration: number) => autocannon({ url, method: 'POST', connections: CONNECTIONS, duration, body: '{}', requests });
  if (warmUp) await run(2); // warm-up: JIT, connection pools, caches
  const before = cpuMs();
  const serviceBefore = service.cpuMs();
  const startedAt = performance.now();
  const result = await run(DURATION);
  const cpuPerRequest = ((cpuMs() - before) * 1000) / Math.max(1, result.requests.total);
  const serviceCpuPerSecond = ((service.cpuMs() - serviceBefore) * 1000) / (performance.now() - startedAt);
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx, cpuPerRequest, serviceCpuPerSecond, serviceRssMb: rssMbOf(service.child.pid!) };
}

function rssMbOf(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}

const bare = await startBare();
// BENCH_PROFILE=<dir>: the service's CPU profiles, written when it exits.
const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
const service = await startService({ nodeArgs: profile }).catch((error: unknown) => {
  bare.child.kill();
  throw error;
});
const BASELINE = process.env.BENCH_BASELINE;
const baseline = BASELINE ? await startService({ nodeArgs: profile, root: path.resolve(BASELINE) }) : undefined;
const rounds: Array<{ bare: Load; service: Load; baseline?: Load }> = [];
try {
  const tokens = (await createPeople(service.url, PEOPLE)).map((person) => person.token);
  const baselineTokens = baseline ? (await createPeople(baseline.url, PEOPLE)).map((person) => person.token) : [];
  // Both servers stay up; the load alternates between them, round by round, so a slow moment of the
  // machine weighs on both. The ratio reported is the median of the rounds'.
  const bareUrl = `http://127.0.0.1:${bare.port}/hello`;
  const serviceUrl = `${service.url}/api/user/refresh/profile`;
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating: the runs back to back, as someone timing the two servers by hand would, so that
    // what the service does between and after runs (collections, jobs, the log) weighs on them.
    const bareResult = await load(bareUrl, [], () => cpuOf(bare.child.pid!), !ALTERNATE);
    if (!baseline) {
      const serviceResult = await load(serviceUrl, tokens, () => service.cpuMs(), !ALTERNATE);
      rounds.push({ bare: bareResult, service: serviceResult });
      continue;
    }
    // The two services in turns first, so that neither always has the machine as the bare run left it.
    const runThis = () => load(serviceUrl, tokens, () => service.cpuMs(), !ALTERNATE);
    const runBaseline = () => load(`${baseline.url}/api/user/refresh/profile`, baselineTokens, () => baseline.cpuMs(), !ALTERNATE);
    const [serviceResult, baselineResult] = round % 2 === 0 ? [await runThis(), await runBaseline()] : await runBaseline().then(async (b) => [await runThis(), b]);
    rounds.push({ bare: bareResult, service: serviceResult, baseline: baselineResult });
  }
} finally {
  bare.child.kill();
  await service.stop();
  await baseline?.stop();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`service: ${service.shape}, as npm start runs it (LOG_LEVEL default, log to ${service.logFile}); ${PEOPLE} people; ${CONNECTIONS} connections, ${DURATION} s per measurement, ${ROUNDS} rounds`);
rounds.forEach(({ bare: b, service: s }, i) => {
  console.log(
    `round ${i + 1}: bare Fastify hello-world ${b.rps.toFixed(0)} req/s (p99 ${b.p99} ms, ${b.cpuPerRequest.toFixed(0)} µs CPU a request) | ` +
      `POST /api/user/refresh/profile ${s.rps.toFixed(0)} req/s (p99 ${s.p99} ms, ${s.cpuPerRequest.toFixed(0)} µs CPU a request) | ${((100 * s.rps) / b.rps).toFixed(1)}% of the bare run before it`,
  );
  console.log(
    `         the service: ${b.serviceCpuPerSecond.toFixed(0)} ms CPU a second while the bare run had the load, ${s.serviceCpuPerSecond.toFixed(0)} ms a second under its own; ` +
      `resident ${b.serviceRssMb.toFixed(0)} MB after the bare run, ${s.serviceRssMb.toFixed(0)} MB after its own`,
  );
});
if (baseline) {
  rounds.forEach(({ service: s, baseline: b }, i) => {
    console.log(`round ${i + 1}: this checkout ${s.cpuPerRequest.toFixed(0)} µs CPU a request (${s.rps.toFixed(0)} req/s), the baseline (${BASELINE}) ${b!.cpuPerRequest.toFixed(0)} µs (${b!.rps.toFixed(0)} req/s): ${((100 * s.cpuPerRequest) / b!.cpuPerRequest).toFixed(0)}% of the baseline's CPU a request`);
  });
  const shares = rounds.map(({ service: s, baseline: b }) => s.cpuPerRequest / b!.cpuPerRequest);
  console.log(`median: this checkout's CPU a request ${(100 * median(shares)).toFixed(0)}% of the baseline's; ${shares.filter((share) => share < 1).length} of ${shares.length} rounds lower`);
}
if (ALTERNATE) {
  const lowest = Math.min(...rounds.map(({ bare: b, service: s }) => s.rps / b.rps));
  console.log(`alternating: lowest ratio ${(lowest * 100).toFixed(1)}% of the bare run before it (target ≥ 60%)`);
}
const ratio = median(rounds.map(({ bare: b, service: s }) => s.rps / b.rps));
const errors = rounds.reduce((sum, r) => sum + r.bare.errors + r.service.errors, 0);
console.log(`median ratio: ${(ratio * 100).toFixed(1)}% of bare Fastify (target ≥ 50%); errors ${errors}`);
console.log(`median CPU a request: service ${median(rounds.map((r) => r.service.cpuPerRequest)).toFixed(0)} µs, bare Fastify ${median(rounds.map((r) => r.bare.cpuPerRequest)).toFixed(0)} µs`);
process.exit(errors > 0 ? 1 : 0);
