// bench/voice: what the voice relay adds to audio, on the service as a deployment runs it
// (bench/support/service-process.ts). BENCH_VOICE_SESSIONS (100) concurrent sessions each send a 20 ms
// audio frame (PCM16, 24 kHz: 960 bytes, base64 in `input_audio_buffer.append`) every 20 ms for
// BENCH_VOICE_SECONDS (10); the fake provider (test/support/fake-realtime-server.ts, echoFrames) sends
// each frame straight back as `response.output_audio.delta`. Timed per frame, send → echo received:
//   direct   the same clients connected straight to the fake provider
//   relay    through the service's relay (/api/ai/rt/ws), both ways
// Added = relay minus direct, at p50 and p99 (target p99 ≤ 5 ms). Every frame carries its number: the
// bench counts frames lost and frames out of order (target none). CPU: the service's CPU time during the
// relay phase per session-minute of talk.
//   npm run bench:voice
import WebSocket from 'ws';
import { startFakeRealtimeServer } from '../test/support/fake-realtime-server.js';
import { createPeople, signIn } from './support/people.js';
import { ADMIN, startService } from './support/service-process.js';

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
            const event = JSON.parse(data.toString()) as { type?: string; delta?: string };
            if (event.type !== 'response.output_audio.delta' || !event.delta) return;
            const seq = Buffer.from(event.delta, 'base64').readUInt32LE(0);
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
            const timer = setInterval(() => {
              const audio = Buffer.alloc(FRAME_BYTES, index % 251);
              audio.writeUInt32LE(seq, 0);
              sentAt.set(seq, now());
              socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: audio.toString('base64') }));
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

const open = (url: string, protocols?: string[]) =>
  new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url, protocols);
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
  const provider = await startFakeRealtimeServer({ echoFrames: true });
  process.env.REALTIME_BASE_URL = provider.url;
  process.env.REALTIME_MODEL = 'fake-realtime';
  const service = await startService();
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
    const minutes = (now() - relayStarted) / 60_000;
    for (const socket of relaySockets) socket.close();

    console.log(`bench:voice: ${SESSIONS} sessions, ${SECONDS} s of 20 ms frames each (${service.shape})`);
    report('direct', direct);
    report('relay', relay);
    const added = (q: number) => quantile(relay.latencies, q) - quantile(direct.latencies, q);
    console.log(`added   p50 ${added(0.5).toFixed(2)} ms, p99 ${added(0.99).toFixed(2)} ms (target p99 ≤ 5 ms)`);
    console.log(`cpu     ${(cpuMs / (SESSIONS * minutes)).toFixed(0)} ms of service CPU per session-minute (${cpuMs} ms over ${(SESSIONS * minutes).toFixed(1)} session-minutes)`);
  } finally {
    await service.stop();
    await provider.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
