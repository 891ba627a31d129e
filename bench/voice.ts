// bench/voice: what the voice relay adds to audio, on the service as a deployment runs it
// (bench/support/service-process.ts). BENCH_VOICE_SESSIONS (100) concurrent sessions each send a 20 ms
// audio frame (PCM16, 24 kHz: 960 bytes, base64 in `input_audio_buffer.append`) every 20 ms for
// BENCH_VOICE_SECONDS (10); the fake provider (bench/servers/fake-realtime.ts, its own process) sends
// each frame straight back as `response.output_audio.delta`. Timed per frame by this process's one
// clock, send → echo received:
//   direct   client → provider → client, the same clients connected straight to the provider
//   relay    client → relay → provider → relay → client, through the service's /api/ai/rt/ws
// Both paths go through the same provider process, so its cost drops out: added = relay minus direct,
// at p50 and p99 (target p99 ≤ 5 ms). Every frame carries its number: the bench counts frames lost and
// frames out of order (target none). CPU: the service's CPU time during the relay phase per
// session-minute of talk. The machine's load average is printed with the figures.
//   npm run bench:voice            (BENCH_PROFILE=<dir>: the service's CPU profile)
import { type ChildProcess, fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { createPeople, signIn } from './support/people.js';
import { ADMIN, startService } from './support/service-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PROFILE_DIR = process.env.BENCH_PROFILE;

const SESSIONS = Number(process.env.BENCH_VOICE_SESSIONS ?? 100);
const SECONDS = Number(process.env.BENCH_VOICE_SECONDS ?? 10);
const FRAME_MS = 20;
const FRAME_BYTES = 960;
const now = () => performance.now();

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

interface PhaseResult {
  latencies: number[];
  sent: number;
  lost: number;
  reordered: number;
}

/** Streams frames on every socket at once; resolves when each has had its echoes (or 2 s more). */
async function stream(sockets: WebSocket[]): Promise<PhaseResult> {
  const latencies: number[] = [];
  let sent = 0;
  let lost = 0;
  let reordered = 0;
  const frames = Math.floor((SECONDS * 1000) / FRAME_MS);
  await Promise.all(
    sockets.map(
      (socket, index) =>
        new Promise<void>((resolve) => {
          const sentAt = new Map<number, number>();
          let last = -1;
          let received = 0;
          socket.on('message', (data) => {
            const seq = sequenceOf(data as Buffer);
            if (seq === undefined) return;
            const at = sentAt.get(seq);
            if (at !== undefined) latencies.push(now() - at);
            if (seq <= last) reordered++;
            last = seq;
            if (++received === frames) finish();
          });
          let done = false;
          const finish = () => {
            if (done) return;
            done = true;
            lost += frames - received;
            resolve();
          };
          // Staggered starts, so the sessions' frames do not all leave in the same millisecond.
          let seq = 0;
          const start = setTimeout(() => {
            const frame = appendFrame(index);
            const timer = setInterval(() => {
              numberFrame(frame, seq);
              sentAt.set(seq, now());
              socket.send(frame, { binary: false });
              sent++;
              if (++seq === frames) {
                clearInterval(timer);
                setTimeout(finish, 2_000);
              }
            }, FRAME_MS);
          }, (index * FRAME_MS) / sockets.length);
          start.unref();
        }),
    ),
  );
  return { latencies, sent, lost, reordered };
}

const APPEND_PREFIX = '{"type":"input_audio_buffer.append","audio":"';

/** A session's frame event, built once: 960 bytes of audio (base64), the first 4 of them the frame's number. */
function appendFrame(index: number): Buffer {
  const audio = Buffer.alloc(FRAME_BYTES, index % 251);
  return Buffer.from(JSON.stringify({ type: 'input_audio_buffer.append', audio: audio.toString('base64') }));
}

/** Writes the frame's number into its audio: the first 6 bytes are the first 8 base64 characters. */
function numberFrame(frame: Buffer, seq: number): void {
  const head = Buffer.from(frame.toString('latin1', APPEND_PREFIX.length, APPEND_PREFIX.length + 8), 'base64');
  head.writeUInt32LE(seq, 0);
  frame.write(head.toString('base64'), APPEND_PREFIX.length, 'latin1');
}

const DELTA_EVENT = Buffer.from('"type":"response.output_audio.delta"');
const DELTA_FIELD = Buffer.from('"delta":"');

/** The frame's number from an echoed audio delta: its first 4 bytes, from the first 8 base64 characters (no parse). */
function sequenceOf(data: Buffer): number | undefined {
  if (data.indexOf(DELTA_EVENT) < 0) return undefined;
  const at = data.indexOf(DELTA_FIELD);
  if (at < 0) return undefined;
  const start = at + DELTA_FIELD.length;
  return Buffer.from(data.toString('latin1', start, start + 8), 'base64').readUInt32LE(0);
}

function startProvider(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, 'servers', 'fake-realtime.ts'), { execArgv: ['--import', 'tsx'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ child, url: message.url }));
    child.once('exit', (code) => reject(new Error(`fake-realtime exited with ${code}`)));
  });
}

const open = (url: string, protocols?: string[]) =>
  new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url, protocols, { perMessageDeflate: false });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });

function report(name: string, result: PhaseResult): void {
  console.log(
    `${name.padEnd(7)} frames ${result.sent}, lost ${result.lost}, out of order ${result.reordered}; ` +
      `send → echo p50 ${quantile(result.latencies, 0.5).toFixed(2)} ms, p99 ${quantile(result.latencies, 0.99).toFixed(2)} ms`,
  );
}

async function main(): Promise<void> {
  const provider = await startProvider();
  process.env.REALTIME_BASE_URL = provider.url;
  process.env.REALTIME_MODEL = 'fake-realtime';
  const service = await startService({ nodeArgs: PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [] }).catch((error: unknown) => {
    provider.child.kill();
    throw error;
  });
  try {
    const base = service.url;
    const admin = await signIn(base, ADMIN.email, ADMIN.password);
    const json = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const profile = (await json('POST', '/api/user/refresh/profile', admin, {})) as { profile?: { institution?: string | { _id: string } } };
    const current = profile.profile?.institution;
    const twinId = typeof current === 'string' ? current : current?._id;
    if (!twinId) throw new Error('the admin has no current twin');
    await json('PUT', `/api/admin/institution/${twinId}`, admin, { rtEnabled: true });
    const people = await createPeople(base, SESSIONS);

    const directSockets = await Promise.all(people.map(() => open(`${provider.url.replace('http', 'ws')}/realtime?model=fake-realtime`)));
    const direct = await stream(directSockets);
    for (const socket of directSockets) socket.close();

    const relaySockets: WebSocket[] = [];
    for (const person of people) {
      const session = (await json('POST', '/api/ai/rt/session', person.token, {})) as { url: string; token: string };
      relaySockets.push(await open(`${base.replace('http', 'ws')}${session.url}`, ['realtime', `twin-token.${session.token}`]));
    }
    // Every provider connection has its setup before frames flow.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cpuBefore = service.cpuMs();
    const relayStarted = now();
    const relay = await stream(relaySockets);
    const cpuMs = service.cpuMs() - cpuBefore;
    const load = os.loadavg();
    const minutes = (now() - relayStarted) / 60_000;
    for (const socket of relaySockets) socket.close();

    console.log(`bench:voice: ${SESSIONS} sessions, ${SECONDS} s of 20 ms frames each (${service.shape}); load average ${load.map((value) => value.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
    report('direct', direct);
    report('relay', relay);
    const added = (q: number) => quantile(relay.latencies, q) - quantile(direct.latencies, q);
    console.log(`added   p50 ${added(0.5).toFixed(2)} ms, p99 ${added(0.99).toFixed(2)} ms (target p99 ≤ 5 ms)`);
    console.log(`cpu     ${(cpuMs / (SESSIONS * minutes)).toFixed(0)} ms of service CPU per session-minute (${cpuMs} ms over ${(SESSIONS * minutes).toFixed(1)} session-minutes)`);
  } finally {
    await service.stop();
    provider.child.kill();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
