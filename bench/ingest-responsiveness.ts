// bench/ingest-responsiveness: does the service keep answering while it ingests a large file? The
// embedded shape started as deployed (bench/support/service-process.ts), the built-in embedder (no
// embedding model configured), the bench's fake model streaming BENCH_CHUNKS (40) pieces BENCH_GAP_MS
// (25) ms apart. Two phases of the same probes: idle for BENCH_IDLE_MS (5 s), then while a
// BENCH_FILE_MB (3) MB text file is uploaded and ingested until ready. The probes: GET /api/test one after
// another (BENCH_PROBE_MS, 20 ms apart) and streamed answers on the SSE route, one after another for each
// of BENCH_PEOPLE (5) people at once; the first of them uploads the file.
// Targets: GET /api/test p99 ≤ 50 ms while ingesting; between-chunk p99 within 10 ms of idle.
//   npm run bench:ingest
//   BENCH_PROFILE=<dir> …    the service's CPU profile, written when it stops
//   BENCH_NODE_ARGS='--import /path/probe.mjs' …    extra node options for the service (a diagnostic preload)
// Figures: docs/performance.md ("bench:ingest").
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleText } from '../test/support/crash.js';
import { createPeople } from './support/people.js';
import { startService } from './support/service-process.js';
import { viaSse } from './support/stream-clients.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 40);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 25);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5_000);
const FILE_MB = Number(process.env.BENCH_FILE_MB ?? 3);
const PROBE_MS = Number(process.env.BENCH_PROBE_MS ?? 20);
const PEOPLE = Math.max(1, Number(process.env.BENCH_PEOPLE ?? 5));
const TARGET = { probe99: 50, gapAdded99: 10 };
const NODE_ARGS = [
  ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
  ...(process.env.BENCH_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []),
];

interface Samples {
  probes: number[];
  gaps: number[];
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function startModel(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, 'servers', 'fake-model.ts'), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CHUNKS: String(CHUNKS), BENCH_GAP_MS: String(GAP_MS) },
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ child, url: message.url }));
    child.once('exit', (code) => reject(new Error(`fake model exited with ${code}`)));
  });
}

/** Probes and streams until `done` resolves; answers what they measured. */
async function measure(base: string, tokens: string[], done: Promise<unknown>): Promise<Samples> {
  const samples: Samples = { probes: [], gaps: [] };
  let finished = false;
  void done.finally(() => (finished = true));
  const probing = (async () => {
    while (!finished) {
      const began = performance.now();
      const response = await fetch(`${base}/api/test`);
      await response.arrayBuffer();
      samples.probes.push(performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    }
  })();
  const streaming = tokens.map(async (token) => {
    while (!finished) {
      const timing = await viaSse(base, token);
      samples.gaps.push(...timing.gaps);
    }
  });
  await Promise.all([done, probing, ...streaming]);
  return samples;
}

async function ingest(base: string, token: string): Promise<number> {
  const began = performance.now();
  const form = new FormData();
  form.append('file', new Blob([sampleText(FILE_MB * 1024 * 1024, 'bench')], { type: 'text/plain' }), 'large.txt');
  const uploaded = await fetch(`${base}/api/user/files`, { method: 'POST', headers: { 'x-access-token': token }, body: form });
  const { uploadId } = (await uploaded.json()) as { uploadId: string };
  if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`);
  for (;;) {
    const file = (await (await fetch(`${base}/api/user/files/${uploadId}`, { headers: { 'x-access-token': token } })).json()) as { data: { status: string; error?: string } };
    if (file.data.status === 'ready') return performance.now() - began;
    if (file.data.status !== 'processing') throw new Error(`ingestion ended ${file.data.status}: ${file.data.error}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main(): Promise<void> {
  const model = await startModel();
  const service = await startService({ modelUrl: model.url, nodeArgs: NODE_ARGS });
  try {
    const people = await createPeople(service.url, PEOPLE);
    const tokens = people.map((person) => person.token);
    await Promise.all(tokens.map((token) => viaSse(service.url, token))); // warm-up: connections and caches
    const idle = await measure(service.url, tokens, new Promise((resolve) => setTimeout(resolve, IDLE_MS)));
    const ingestion = ingest(service.url, tokens[0]);
    const busy = await measure(service.url, tokens, ingestion);
    const ingestMs = await ingestion;

    const row = (label: string, samples: Samples) =>
      `${label.padEnd(10)} GET /api/test p50 ${percentile(samples.probes, 50).toFixed(1)} ms, p99 ${percentile(samples.probes, 99).toFixed(1)} ms, max ${Math.max(...samples.probes).toFixed(1)} ms (${samples.probes.length}); ` +
      `between chunks p50 ${percentile(samples.gaps, 50).toFixed(1)} ms, p99 ${percentile(samples.gaps, 99).toFixed(1)} ms (${samples.gaps.length})`;
    console.log(`shape: ${service.shape}; ${PEOPLE} people streaming; a ${FILE_MB} MB text file ingested in ${(ingestMs / 1000).toFixed(1)} s`);
    console.log(row('idle', idle));
    console.log(row('ingesting', busy));
    const probe99 = percentile(busy.probes, 99);
    const gapAdded = percentile(busy.gaps, 99) - percentile(idle.gaps, 99);
    console.log(`GET /api/test p99 while ingesting ${probe99.toFixed(1)} ms (target ≤ ${TARGET.probe99}): ${probe99 <= TARGET.probe99 ? 'met' : 'missed'}`);
    console.log(`between-chunk p99 added by ingesting ${gapAdded.toFixed(1)} ms (target ≤ ${TARGET.gapAdded99}): ${gapAdded <= TARGET.gapAdded99 ? 'met' : 'missed'}`);
  } finally {
    await service.stop();
    model.child.kill();
  }
}

await main();
