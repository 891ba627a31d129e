// Streaming in the scaled shape: two real API processes on one PostgreSQL database and one Redis,
// no sticky sessions. A request on process A naming a socket held by process B streams the answer to
// that socket: the turn runs on B (turn-handoff.ts), so its pieces never cross Redis, and A answers
// the request. A cancel_request or cancel_streaming received by B acts on the turn, and a cancel_request
// received by B stops a turn running on A (event bus). A's cached profile shows the balance a turn run on
// B charged as soon as A answers. The processes run `dist/main.js api`, and the requests go to the real
// Q&A route, POST /api/ai/personal/qanda.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { history } from '../src/modules/history/history.tables.js';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildUser, type BuiltUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { collect, connectSocket, register } from './support/socket-client.js';
import { scaledEnv, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { until } from './support/until.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.runIf(enabled)('streaming across two API processes', () => {
  let database: TestDatabase;
  let model: FakeModelServer;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let ada: BuiltUser;
  let token: string;
  let env: Record<string, string>;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    [database, model] = await Promise.all([openTestDatabase(), startFakeModelServer()]);
    // Priced, so a turn changes its payer's balance (cached in the profile).
    env = { ...scaledEnv(database.url!, model.url), DEFAULT_PRICE_IN: '1', DEFAULT_PRICE_OUT: '1' };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
    ada = await buildUser(database.db, { credits: 1000 });
    token = await signInAt(a.url, ada.user.email, ada.password);
  }, 60_000);

  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.close();
  });

  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await model?.close();
    await database?.close();
  });

  /** A socket held by process B, registered for Ada with the token issued by process A. */
  async function socketOnB(): Promise<Socket> {
    const socket = await connectSocket(b.url, { auth: { token } });
    sockets.push(socket);
    expect((await register(socket, ada.user.id)).event).toBe('connect_success');
    return socket;
  }

  /** Asks on A, streaming to the socket named (none: the answer comes as JSON only). */
  function askOnA(socketId: string | undefined, question = 'Tell me'): Promise<Record<string, unknown>> {
    return fetch(`${a.url}/api/ai/personal/qanda`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': token },
      body: JSON.stringify({ inputs: [question], requestArgs: socketId ? { socketId } : {} }),
    }).then((response) => response.json() as Promise<Record<string, unknown>>);
  }

  it('streams the answer to a request on A to the socket held by B', async () => {
    const socket = await socketOnB();
    const received = collect(socket, 'RECEIVE_STREAM');
    model.enqueue({ chunks: ['One ', 'two ', 'three.'], gapMs: 20 });

    const answer = await askOnA(socket.id!);
    expect(answer).toMatchObject({ success: true, answer: 'One two three.', cancelled: false });
    await until(() => received.length === 3, 5_000);
    const historyId = answer.historyId;
    expect(received).toEqual([
      { prompt: 'One ', delta: 'One ', type: 'STREAM', seq: 2, historyId },
      { prompt: 'One two ', delta: 'two ', type: 'STREAM', seq: 3, historyId },
      { prompt: 'One two three.', delta: 'three.', type: 'STREAM', seq: 4, historyId },
    ]);
  });

  it('runs the turn where its socket is: of the answer, only the finished one crosses Redis, not its pieces', async () => {
    const socket = await socketOnB();
    const received = collect(socket, 'RECEIVE_STREAM');
    // Everything published on Redis (bus and Socket.IO adapter alike) that carries this answer's text.
    const marker = `m${randomBytes(6).toString('hex')}`;
    const watcher = new Redis(process.env.TEST_REDIS_URL!);
    const carrying: string[] = [];
    watcher.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) => {
      if (message.includes(marker)) carrying.push(channel.toString());
    });
    try {
      await watcher.psubscribe('*');
      const chunks = Array.from({ length: 8 }, (_, i) => `${marker}-${i} `);
      model.enqueue({ chunks, gapMs: 10 });

      const answer = await askOnA(socket.id!);
      expect(answer).toMatchObject({ success: true, answer: chunks.join('') });
      await until(() => received.length === 8, 5_000);
      // B answered A once, on A's own handoff channel; no piece went through the adapter or the bus.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(carrying).toHaveLength(1);
      expect(carrying[0]).toMatch(/^turn\.handoff\./);
    } finally {
      watcher.disconnect();
    }
  });

  it("shows the balance a turn run on B charged in A's very next profile refresh (A had the profile cached)", async () => {
    const socket = await socketOnB();
    const credits = async () => {
      const response = await fetch(`${a.url}/api/user/refresh/profile`, { method: 'POST', headers: { 'x-access-token': token } });
      return ((await response.json()) as { profile: { credits: number } }).profile.credits;
    };
    const before = await credits();
    expect(await credits()).toBe(before);
    model.enqueue({ chunks: ['Paid.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    expect(await askOnA(socket.id!)).toMatchObject({ success: true, answer: 'Paid.', credits: 1 });
    expect(await credits()).toBeCloseTo(before - 1, 6);
  });

  it('streams to a socket held by a process that was running before the asking one started', async () => {
    const socket = await socketOnB();
    const received = collect(socket, 'RECEIVE_STREAM');
    // A process added while sockets are open (scaling out) reaches them too.
    const c = await startProcess(SERVICE_MAIN, ['api'], env);
    try {
      model.enqueue({ chunks: ['Late ', 'but ', 'here.'], gapMs: 20 });
      const answer = await fetch(`${c.url}/api/ai/personal/qanda`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-access-token': token },
        body: JSON.stringify({ inputs: ['Tell me'], requestArgs: { socketId: socket.id } }),
      }).then((response) => response.json());
      expect(answer).toMatchObject({ success: true, answer: 'Late but here.' });
      await until(() => received.length === 3, 5_000);
      expect(received.map((payload) => (payload as { delta: string }).delta)).toEqual(['Late ', 'but ', 'here.']);
    } finally {
      await stopProcess(c);
    }
  }, 60_000);

  it('answers streamingFailed, naming the answer it runs, when the socket is gone or registered to nobody', async () => {
    const socket = await socketOnB();
    const id = socket.id!;
    socket.emit('UNSUBSCRIBE', { userId: ada.user.id });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await askOnA(id)).toEqual({ success: true, streamingFailed: true, historyId: expect.any(String) });
    socket.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await askOnA(id)).toEqual({ success: true, streamingFailed: true, historyId: expect.any(String) });
  });

  it("stops the turn when B receives cancel_request from the turn's socket, keeping the partial answer", async () => {
    const socket = await socketOnB();
    const received = collect(socket, 'RECEIVE_STREAM');
    model.enqueue({ chunks: ['Partial ', 'answer ', 'never sent'], stallAfter: 2 });
    const pending = askOnA(socket.id!);
    await until(() => received.length === 2, 5_000);

    socket.emit('cancel_request', { userId: ada.user.id });
    expect(await pending).toMatchObject({ success: true, cancelled: true, answer: 'Partial answer ' });
    await until(() => model.requests.at(-1)?.aborted === true, 5_000);
    // The turn kept its record with the partial answer and charged it.
    const [row] = await database.db.select().from(history).where(eq(history.id, (await pending).historyId as string));
    expect(row).toMatchObject({ status: 'cancelled', answer: 'Partial answer ' });
    expect(row.credits).toBeGreaterThan(0);
  });

  it('stops a turn running on A (no socket named) when B receives cancel_request from that person', async () => {
    const socket = await socketOnB();
    const asked = model.requests.length;
    model.enqueue({ chunks: ['Quiet ', 'answer ', 'never sent'], stallAfter: 2 });
    const pending = askOnA(undefined);
    await until(() => model.requests.length === asked + 1, 5_000);
    // The two pieces the model sent reach A at once; give them ample time.
    await new Promise((resolve) => setTimeout(resolve, 300));

    socket.emit('cancel_request', { userId: ada.user.id });
    expect(await pending).toMatchObject({ success: true, cancelled: true, answer: 'Quiet answer ' });
    await until(() => model.requests.at(-1)?.aborted === true, 5_000);
  });

  it('mutes the rest of the answer when B receives cancel_streaming, and the next answer streams again', async () => {
    const socket = await socketOnB();
    const received = collect(socket, 'RECEIVE_STREAM');
    model.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e', 'f'], gapMs: 150 });
    const pending = askOnA(socket.id!);
    await until(() => received.length === 1, 5_000);

    socket.emit('cancel_streaming', { userId: ada.user.id });
    const answer = await pending;
    // The turn itself ran to the end; only the sending stopped.
    expect(answer).toMatchObject({ success: true, cancelled: false, answer: 'abcdef' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = received.length;
    expect(sent).toBeLessThan(6);

    model.enqueue({ chunks: ['again'] });
    expect(await askOnA(socket.id!)).toMatchObject({ answer: 'again' });
    await until(() => received.length === sent + 1, 5_000);
    expect(received.at(-1)).toEqual({ prompt: 'again', delta: 'again', type: 'STREAM', seq: 2, historyId: expect.any(String) });
  });

  // Last: B stops here.
  it('lets a turn running on B finish when B is told to stop, and A answers the request', async () => {
    const socket = await socketOnB();
    const received = collect(socket, 'RECEIVE_STREAM');
    model.enqueue({ chunks: ['Finishing ', 'before ', 'leaving.'], gapMs: 300 });
    const pending = askOnA(socket.id!);
    await until(() => received.length === 1, 5_000);

    b.child.kill('SIGTERM');
    expect(await pending).toMatchObject({ success: true, answer: 'Finishing before leaving.', cancelled: false });
    expect(await b.exited).toBe(0);
  });
});
