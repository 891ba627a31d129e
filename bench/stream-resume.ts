// bench/stream-resume: a resume through the service's route, as a deployment runs it
// (bench/support/service-process.ts). One answer of BENCH_FRAMES (1,000) pieces is streamed to its end
// over SSE; then BENCH_RESUMES (200) resumes of it (GET /api/ai/stream/{historyId}, from the start),
// one after another, are timed from the request to the last byte of `done`. With BENCH_REDIS_URL, also
// the Redis memory of the answer's stream (MEMORY USAGE). Target: p99 within 50 ms.
//   npm run bench:stream-resume
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:stream-resume
// Figures: docs/performance.md ("bench:stream-resume").
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createPeople } from './support/people.js';
import { startService } from './support/service-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FRAMES = Number(process.env.BENCH_FRAMES ?? 1000);
const RESUMES = Number(process.env.BENCH_RESUMES ?? 200);

const model = fork(path.join(here, 'servers', 'fake-model.ts'), { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_CHUNKS: String(FRAMES), BENCH_GAP_MS: '0' } });
const modelUrl = await new Promise<string>((resolve) => model.once('message', (message: { url: string }) => resolve(message.url)));
const service = await startService({ modelUrl });
try {
  const [person] = await createPeople(service.url, 1);
  const headers = { authorization: `Bearer ${person.token}` };
  const asked = await fetch(`${service.url}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ inputs: ['Go'], requestArgs: {} }),
  });
  const body = await asked.text();
  const historyId = /"historyId":"([0-9a-f]{24})"/.exec(body)?.[1];
  if (!historyId) throw new Error(`no answer: ${body.slice(0, 300)}`);
  const frames = body.split('\n\n').filter((block) => block.includes('data: ')).length - 1;

  const times: number[] = [];
  for (let i = 0; i < RESUMES; i++) {
    const start = performance.now();
    const text = await (await fetch(`${service.url}/api/ai/stream/${historyId}`, { headers })).text();
    times.push(performance.now() - start);
    if (!text.includes('"type":"done"')) throw new Error('a resume did not reach done');
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))].toFixed(1);
  console.log(`bench:stream-resume (${service.shape}): an answer of ${frames} numbered frames, ${RESUMES} resumes from the start`);
  console.log(`  resume to done: p50 ${at(50)} ms, p99 ${at(99)} ms, max ${times.at(-1)!.toFixed(1)} ms (target p99 <= 50 ms)`);
  if (process.env.BENCH_REDIS_URL) {
    const redis = new Redis(process.env.BENCH_REDIS_URL);
    const bytes = await redis.call('MEMORY', 'USAGE', `stream-log:${historyId}`, 'SAMPLES', '0');
    console.log(`  Redis memory of the answer's stream: ${(Number(bytes) / 1024).toFixed(1)} KiB (${frames} frames)`);
    redis.disconnect();
  }
} finally {
  await service.stop();
  model.kill();
}
