// bench/http-overhead: requests per second of an authenticated JSON route
// (POST /api/user/refresh/profile) against a bare Fastify hello-world, in the same run.
// Each server runs in its own process; the load generator (autocannon) runs here.
// Target: the service reaches at least 50% of bare Fastify's requests per second on PostgreSQL.
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench npm run bench:http
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Started { child: ChildProcess; port: number; token?: string; database?: string }

function start(script: string): Promise<Started> {
  const child = fork(path.join(here, 'servers', script), { execArgv: ['--import', 'tsx'], env: process.env });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number; token?: string; database?: string }) => resolve({ child, ...message }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function load(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; errors: number }> {
  const run = (duration: number) =>
    autocannon({ url, method: 'POST', connections: CONNECTIONS, duration, headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
  await run(2); // warm-up: JIT, connection pools, caches
  const result = await run(DURATION);
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

const bare = await start('bare.ts');
const bareResult = await load(`http://127.0.0.1:${bare.port}/hello`, {});
bare.child.kill();

const service = await start('service.ts');
const serviceResult = await load(`http://127.0.0.1:${service.port}/api/user/refresh/profile`, { 'x-access-token': service.token! });
service.child.kill();

const ratio = serviceResult.rps / bareResult.rps;
console.log(`database: ${service.database}; ${CONNECTIONS} connections, ${DURATION} s each`);
console.log(`bare Fastify hello-world:        ${bareResult.rps.toFixed(0)} req/s, p99 ${bareResult.p99} ms, errors ${bareResult.errors}`);
console.log(`POST /api/user/refresh/profile:  ${serviceResult.rps.toFixed(0)} req/s, p99 ${serviceResult.p99} ms, errors ${serviceResult.errors}`);
console.log(`ratio: ${(ratio * 100).toFixed(1)}% of bare Fastify (target ≥ 50%)`);
process.exit(serviceResult.errors > 0 ? 1 : 0);
