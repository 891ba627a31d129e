// bench/socket-heap: the live V8 heap one idle Socket.IO socket holds, without the rest of the service.
// The socket server of the service (platform/realtime/socket.ts) with its connection rules
// (modules/conversations/socket-events.ts: a token, REGISTER) on a bare node:http server and the memory
// bus; a child process opens BENCH_SOCKETS (4,000) websocket sockets that REGISTER as the web client
// does (over 20 people); heap used after forced collections, before against after, over their number.
// BENCH_BARE=1 runs the socket server's own minimum instead of the service's rules (every connection
// accepted, a REGISTER answered, nothing kept): what is left is the engine's, the socket layer's and the
// WebSocket engine's (engine-io.ts, socket-io.ts, ws-engine.ts) and the TCP socket's.
// BENCH_SNAPSHOT=<dir> writes a heap snapshot before and after, to see what each socket keeps (compare
// them in Chrome's DevTools, "Comparison").
//   node --expose-gc --import tsx bench/socket-heap.ts
// Figures: docs/performance.md, bench:footprint, "Idle sockets".
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { io as connect } from 'socket.io-client';
import { attachStreamSockets } from '../src/modules/conversations/socket-events.js';
import { createMemoryBus } from '../src/platform/realtime/bus.js';
import type { Actor } from '../src/platform/http/actor.js';
import { createSocketServer, SOCKET_PATH } from '../src/platform/realtime/socket.js';

/** Every token names a signed-in person of that id (the token check itself is not what is measured). */
const personOf = (userId: string): Actor => ({
  userId,
  sessionId: `session-${userId}`,
  email: `${userId}@example.com`,
  accountType: 'user',
  twinId: null,
  role: null,
  permissions: [],
  launchScope: null,
  mustChangePassword: false,
});
const COUNT = Number(process.env.BENCH_SOCKETS ?? 4000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The child: opens the sockets (100 at a time), says so, then holds them. */
async function holdSockets(url: string): Promise<void> {
  const held: unknown[] = [];
  for (let i = 0; i < COUNT; i += 100) {
    const batch = Array.from({ length: Math.min(100, COUNT - i) }, (_, j) => {
      const userId = `person-${(i + j) % 20}`;
      const socket = connect(url, { path: SOCKET_PATH, transports: ['websocket'], auth: { token: userId }, reconnection: false, forceNew: true });
      held.push(socket);
      return new Promise<void>((resolve, reject) => {
        socket.once('connect', () => socket.emit('REGISTER', { userId }));
        socket.once('connect_success', () => resolve());
        socket.once('connect_error', reject);
      });
    });
    await Promise.all(batch);
  }
  process.send!('held');
  setInterval(() => {}, 60_000);
}

async function measure(): Promise<void> {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with node --expose-gc --import tsx bench/socket-heap.ts');
  const server = http.createServer((_, res) => res.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (process.env.BENCH_BARE) {
    createSocketServer(server, {
      authorize: async () => ({}),
      event: (socket, event) => {
        if (event === 'REGISTER') socket.emit('connect_success', {});
      },
    });
  } else await attachStreamSockets({ httpServer: server, bus: createMemoryBus(), verify: async (token) => personOf(token) });

  const heapUsed = async (label: string) => {
    for (let i = 0; i < 3; i++) {
      collect();
      await sleep(100);
    }
    if (process.env.BENCH_SNAPSHOT) v8.writeHeapSnapshot(path.join(process.env.BENCH_SNAPSHOT, `${label}.heapsnapshot`));
    return process.memoryUsage().heapUsed;
  };
  const before = await heapUsed('before');
  const child = fork(fileURLToPath(import.meta.url), [url], { execArgv: ['--import', 'tsx'] });
  await new Promise((resolve) => child.once('message', resolve));
  await sleep(2_000);
  const after = await heapUsed('after');
  console.log(`${process.env.BENCH_BARE ? 'the bare socket server' : 'the service\'s sockets'}: ${COUNT} idle sockets, ${((after - before) / COUNT / 1024).toFixed(2)} KB of live heap each`);
  child.kill();
  process.exit(0);
}

if (process.argv[2]) await holdSockets(process.argv[2]);
else await measure();
