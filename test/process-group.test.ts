// API_PROCESSES=2: one port, a primary handing connections to two API processes (dist/main.js api, on
// one PostgreSQL database and one Redis). Long-polling Socket.IO sessions (no WebSocket, so every
// request is a new HTTP request routed by the primary) stay on their process; WebSocket sessions, and
// long-polling ones that upgrade, work on the connections handed over; answers stream over SSE
// and to sockets wherever the turn runs; a process that dies is started again; SIGTERM lets the
// answer in flight finish and every process exit.
import { execFileSync } from 'node:child_process';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildUser, type BuiltUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { scaledEnv, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { collect, register } from './support/socket-client.js';
import { readSse } from './support/sse-client.js';
import { until } from './support/until.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.runIf(enabled)('two API processes on one port', () => {
  let database: TestDatabase;
  let model: FakeModelServer;
  let service: ServiceProcess;
  let ada: BuiltUser;
  let token: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    [database, model] = await Promise.all([openTestDatabase(), startFakeModelServer()]);
    service = await startProcess(SERVICE_MAIN, ['api'], { ...scaledEnv(database.url!, model.url), API_PROCESSES: '2', SHUTDOWN_GRACE_MS: '10000' });
    ada = await buildUser(database.db, { credits: 1000 });
    token = await signInAt(service.url, ada.user.email, ada.password);
  }, 90_000);

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await stopProcess(service);
    await model?.close();
    await database?.close();
  });

  /** A Socket.IO client on long-polling only: each of its requests reaches the primary anew. */
  async function pollingSocket(): Promise<Socket> {
    const socket = io(service.url, { path: '/socket.io', transports: ['polling'], upgrade: false, reconnection: false, forceNew: true, auth: { token } });
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    expect((await register(socket, ada.user.id)).event).toBe('connect_success');
    return socket;
  }

  const sessionSlot = (socket: Socket) => socket.io.engine.id.split('-')[0];
  const apiProcesses = () =>
    execFileSync('pgrep', ['-P', String(service.child.pid), '-f', 'main.js'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);

  async function ask(socket: Socket, chunks: string[]): Promise<Record<string, unknown>> {
    model.enqueue({ chunks, gapMs: 20 });
    const response = await fetch(`${service.url}/api/ai/personal/qanda`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': token },
      body: JSON.stringify({ inputs: ['Tell me'], requestArgs: { socketId: socket.id } }),
    });
    return (await response.json()) as Record<string, unknown>;
  }

  it('keeps each long-polling session on its process, sessions on both, and streams to each socket', async () => {
    const polling: Socket[] = [];
    for (let i = 0; i < 4; i++) polling.push(await pollingSocket());
    expect(new Set(polling.map(sessionSlot))).toEqual(new Set(['0', '1']));

    for (const socket of polling) {
      const received = collect<{ delta: string }>(socket, 'RECEIVE_STREAM');
      const answer = await ask(socket, ['Over ', 'polling.']);
      expect(answer).toMatchObject({ success: true, answer: 'Over polling.', cancelled: false });
      await until(() => received.length === 2, 5_000);
      expect(received.map((payload) => payload.delta)).toEqual(['Over ', 'polling.']);
    }
    // The sessions are still alive: they keep polling the process that holds them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(polling.every((socket) => socket.connected)).toBe(true);
  }, 30_000);

  it('serves WebSocket sessions, and long-polling ones that upgrade, on the connections it hands over', async () => {
    for (const transports of [['websocket'], ['polling', 'websocket']] as Array<Array<'polling' | 'websocket'>>) {
      for (let i = 0; i < 2; i++) {
        const socket = io(service.url, { path: '/socket.io', transports, reconnection: false, forceNew: true, auth: { token } });
        sockets.push(socket);
        await new Promise<void>((resolve, reject) => {
          socket.once('connect', () => resolve());
          socket.once('connect_error', reject);
        });
        if (socket.io.engine.transport.name !== 'websocket') await new Promise((resolve) => socket.io.engine.once('upgrade', resolve));
        expect((await register(socket, ada.user.id)).event).toBe('connect_success');
        const received = collect<{ delta: string }>(socket, 'RECEIVE_STREAM');
        const answer = await ask(socket, ['Over ', 'WebSocket.']);
        expect(answer).toMatchObject({ success: true, answer: 'Over WebSocket.', cancelled: false });
        await until(() => received.length === 2, 5_000);
        expect(received.map((payload) => payload.delta)).toEqual(['Over ', 'WebSocket.']);
        expect(socket.io.engine.transport.name).toBe('websocket');
      }
    }
  }, 30_000);

  it('streams SSE answers through the primary', async () => {
    for (const text of ['First.', 'Second.']) {
      model.enqueue({ chunks: [text] });
      const response = await fetch(`${service.url}/api/ai/personal-stream/qanda-stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ inputs: ['Go'] }),
      });
      const frames = await readSse(response).rest();
      expect(frames.map((frame) => frame.type)).toEqual(['connected', 'started', 'stream', 'complete', 'done']);
      expect(frames.find((frame) => frame.type === 'complete')).toMatchObject({ success: true, outputs: [text] });
    }
  });

  it('starts an API process again when one dies, and sessions reach both again', async () => {
    const before = apiProcesses();
    expect(before).toHaveLength(2);
    process.kill(before[0], 'SIGKILL');
    await until(() => {
      const now = apiProcesses();
      return now.length === 2 && !now.includes(before[0]);
    }, 30_000);
    // Ready again: new sessions land on both slots.
    await until(async () => {
      const slots = new Set<string>();
      for (let i = 0; i < 4; i++) slots.add(sessionSlot(await pollingSocket()));
      return slots.size === 2;
    }, 30_000);
  }, 60_000);

  it('on SIGTERM lets the answer in flight finish, then every process exits 0', async () => {
    model.enqueue({ chunks: ['One ', 'two ', 'three.'], gapMs: 400 });
    const response = await fetch(`${service.url}/api/ai/personal-stream/qanda-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ inputs: ['Count'] }),
    });
    const reader = readSse(response);
    expect((await reader.next())?.type).toBe('connected');
    const children = apiProcesses();

    service.child.kill('SIGTERM');
    const rest = await reader.rest();
    const complete = rest.find((frame) => frame.type === 'complete')!;
    expect(complete).toMatchObject({ success: true, outputs: ['One two three.'] });
    expect(rest.at(-1)).toEqual({ type: 'done', seq: (complete.seq as number) + 1, historyId: complete.historyId });
    expect(await service.exited).toBe(0);
    for (const pid of children) expect(() => process.kill(pid, 0)).toThrow();
  }, 30_000);
});
