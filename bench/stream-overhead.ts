// bench/stream-overhead: what the service adds to a streamed answer. The fake model (its own process)
// streams BENCH_CHUNKS pieces BENCH_GAP_MS apart; a client here measures time to first chunk and the
// delay between chunks, directly from the fake model (baseline) and through the service, at 1, 100
// and 1,000 concurrent SSE streams and at 1,000 Socket.IO streams, and prints the added latency
// (p50/p99) and the ratio. The service answers on the real Q&A routes (records and charges included).
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench npm run bench:stream
//   BENCH_CHUNKS=100 BENCH_GAP_MS=100 BENCH_RAMP_MS=10000 …   (steady state: 1,000 streams open together)
//   BENCH_PROFILE=/tmp/prof …                                  (the service's CPU profile)
// Measured 2026-11-22 on the 2-core development machine (PostgreSQL 15, one API process), added time to
// first chunk p50/p99: burst of 1: 7-11 ms; burst of 100: 205/395 ms; burst of 1,000 SSE: 3.4/3.7 s;
// 1,000 Socket.IO: 1.6/3.6 s. Steady state (10 s answers, starts spread over 10 s): 100 streams
// 8.1/24.4 ms; 1,000 streams 352 ms/9.6 s (the process saturates). Added inter-chunk p99: 0.7-13 ms,
// 84 ms for 1,000 sockets, 106 ms at steady 1,000. Every answer complete and in order.
// Targets (≤ 5 ms p50, ≤ 25 ms p99 at 1,000): not met.
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { io, type Socket } from 'socket.io-client';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 50);
const LEVELS = (process.env.BENCH_LEVELS ?? '1,100,1000').split(',').map(Number);
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
/**
 * 0 (the default): every stream of a level starts at once, a burst. Otherwise the starts are spread
 * evenly over this many ms: with answers at least as long, all streams of the level are open together
 * in a steady state, and the first chunk measures the service under that load rather than the queue
 * of a burst.
 */
const RAMP_MS = Number(process.env.BENCH_RAMP_MS ?? 0);
const SCENARIO_TIMEOUT_MS = 120_000 + RAMP_MS;

interface Timing {
  /** ms from sending the request to the first text chunk. */
  first: number;
  /** ms between consecutive text chunks. */
  gaps: number[];
  chunks: number;
  /** The pieces arrived complete and in order (the text equals the fake model's script). */
  inOrder: boolean;
}

/** BENCH_PROFILE=<folder>: the service writes a CPU profile there when the run ends. */
const PROFILE_DIR = process.env.BENCH_PROFILE;

function start<T>(script: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ child: ChildProcess } & T> {
  const child = fork(path.join(here, 'servers', script), { execArgv: ['--import', 'tsx', ...nodeArgs], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    child.once('message', (message: T) => resolve({ child, ...message }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/**
 * The client side is plain node:http (kept-alive connections), for the model and the service alike:
 * the measuring client shares the machine with both, and fetch's web streams cost it several times
 * the CPU per piece.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function post(url: string, headers: Record<string, string>, body: unknown): Promise<http.IncomingMessage> {
  const json = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) } });
    request.once('response', resolve);
    request.once('error', reject);
    request.end(json);
  });
}

async function readText(response: http.IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const piece of response as AsyncIterable<string>) text += piece;
  return text;
}

/** Reads an event stream and calls onData with each `data:` payload as it arrives. */
async function readEvents(response: http.IncomingMessage, onData: (data: string) => void): Promise<void> {
  response.setEncoding('utf8');
  let buffer = '';
  for await (const piece of response as AsyncIterable<string>) {
    buffer += piece;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of block.split('\n')) if (line.startsWith('data: ')) onData(line.slice(6));
    }
  }
}

/** What the fake model streams (bench/servers/fake-model.ts). */
const SCRIPT = Array.from({ length: CHUNKS }, (_, i) => `piece ${i} `).join('');

function timing(sentAt: number, arrivals: number[], text: string): Timing {
  return {
    inOrder: text === SCRIPT, first: arrivals[0] - sentAt, gaps: arrivals.slice(1).map((t, i) => t - arrivals[i]), chunks: arrivals.length };
}

async function direct(modelUrl: string): Promise<Timing> {
  const arrivals: number[] = [];
  let text = '';
  const sentAt = performance.now();
  const response = await post(`${modelUrl}/chat/completions`, {}, { model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Go' }] });
  await readEvents(response, (data) => {
    if (data === '[DONE]') return;
    const content = (JSON.parse(data) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content;
    if (content) {
      arrivals.push(performance.now());
      text += content;
    }
  });
  return timing(sentAt, arrivals, text);
}

async function viaSse(base: string, token: string): Promise<Timing> {
  const arrivals: number[] = [];
  let text = '';
  const sentAt = performance.now();
  const response = await post(
    `${base}/api/ai/personal-stream/qanda-stream`,
    { accept: 'text/event-stream', authorization: `Bearer ${token}` },
    { inputs: ['Go'], requestArgs: { ragOnly: false } },
  );
  await readEvents(response, (data) => {
    const frame = JSON.parse(data) as { type: string; delta?: string };
    if (frame.type === 'stream') {
      arrivals.push(performance.now());
      text += frame.delta ?? '';
    }
  });
  return timing(sentAt, arrivals, text);
}

async function viaSocket(base: string, token: string, socket: Socket): Promise<Timing> {
  const arrivals: number[] = [];
  let text = '';
  const onChunk = (payload: { delta: string }) => {
    arrivals.push(performance.now());
    text += payload.delta;
  };
  socket.on('RECEIVE_STREAM', onChunk);
  const sentAt = performance.now();
  const response = await post(`${base}/api/ai/personal/qanda`, { 'x-access-token': token }, { inputs: ['Go'], requestArgs: { socketId: socket.id } });
  const body = JSON.parse(await readText(response)) as { streamingFailed?: boolean };
  if (body.streamingFailed) throw new Error('streamingFailed');
  // The last chunks may still be on the wire when the request answers.
  const deadline = Date.now() + 5_000;
  while (arrivals.length < CHUNKS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  socket.off('RECEIVE_STREAM', onChunk);
  return timing(sentAt, arrivals, text);
}

async function connectSockets(base: string, token: string, userId: string, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, () => {
      const socket = io(base, { path: '/socket.io', transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
      return new Promise<Socket>((resolve, reject) => {
        socket.once('connect', () => socket.emit('REGISTER', { userId }));
        socket.once('connect_success', () => resolve(socket));
        socket.once('connect_error', reject);
        socket.once('error', (error: unknown) => reject(new Error(JSON.stringify(error))));
      });
    });
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
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

function summary(timings: Timing[]) {
  const firsts = timings.map((t) => t.first);
  const gaps = timings.flatMap((t) => t.gaps);
  const complete = timings.filter((t) => t.chunks === CHUNKS && t.inOrder).length;
  return { first50: percentile(firsts, 50), first99: percentile(firsts, 99), gap50: percentile(gaps, 50), gap99: percentile(gaps, 99), complete };
}

const f = (ms: number) => `${ms.toFixed(1)} ms`;
/** The service's event loop delay since the last call (ms): what every ready piece of work waited. */
async function loopDelay(): Promise<{ p50: number; p99: number; max: number }> {
  const reply = new Promise<{ p50: number; p99: number; max: number }>((resolve) => {
    const onMessage = (message: { loop?: { p50: number; p99: number; max: number } }) => {
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

async function report(label: string, count: number, service: Timing[], baseline: Timing[]): Promise<boolean> {
  const s = summary(service);
  const d = summary(baseline);
  console.log(`\n${label}, ${count} concurrent (${s.complete}/${count} complete and in order; baseline ${d.complete}/${count})`);
  console.log(`  first chunk   direct p50 ${f(d.first50)} p99 ${f(d.first99)} | service p50 ${f(s.first50)} p99 ${f(s.first99)} | added p50 ${f(s.first50 - d.first50)} p99 ${f(s.first99 - d.first99)} | ratio p50 ${(s.first50 / d.first50).toFixed(2)}x`);
  console.log(`  between chunks direct p50 ${f(d.gap50)} p99 ${f(d.gap99)} | service p50 ${f(s.gap50)} p99 ${f(s.gap99)} | added p50 ${f(s.gap50 - d.gap50)} p99 ${f(s.gap99 - d.gap99)} | ratio p50 ${(s.gap50 / d.gap50).toFixed(2)}x`);
  const loop = await loopDelay();
  console.log(`  service event loop delay p50 ${f(loop.p50)} p99 ${f(loop.p99)} max ${f(loop.max)}`);
  return s.complete === count;
}

const model = await start<{ url: string }>('fake-model.ts', { BENCH_CHUNKS: String(CHUNKS), BENCH_GAP_MS: String(GAP_MS) });
const service = await start<{ port: number; token: string; userId: string; database: string }>(
  'stream-service.ts',
  { BENCH_MODEL_URL: model.url },
  PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [],
);
const base = `http://127.0.0.1:${service.port}`;
console.log(
  `database: ${service.database}; ${CHUNKS} chunks ${GAP_MS} ms apart per answer; ` +
    (RAMP_MS > 0 ? `starts spread over ${RAMP_MS} ms` : 'all streams of a level start at once'),
);
let ok = true;
try {
  await concurrently(5, () => viaSse(base, service.token)); // warm-up
  for (const level of LEVELS) {
    const baseline = await concurrently(level, () => direct(model.url));
    await loopDelay();
    const measured = await concurrently(level, () => viaSse(base, service.token));
    ok = (await report('SSE', level, measured, baseline)) && ok;
  }
  if (SOCKETS > 0) {
    const sockets = await connectSockets(base, service.token, service.userId, SOCKETS);
    const baseline = await concurrently(SOCKETS, () => direct(model.url));
    await loopDelay();
    const measured = await concurrently(SOCKETS, (i) => viaSocket(base, service.token, sockets[i]));
    ok = (await report('Socket.IO', SOCKETS, measured, baseline)) && ok;
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
