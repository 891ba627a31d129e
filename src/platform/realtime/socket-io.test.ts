// The socket server (engine-io.ts, socket-io.ts) as Socket.IO's own client speaks to it, over
// long-polling, WebSocket and the upgrade between them; and raw Engine.IO requests for what a client
// library never sends: the protocol's error codes, overlapping polls, oversized bodies, CORS, a
// packet that is not JSON, the heartbeat's timeout and a session that never joins.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { io as connectClient, type Socket as ClientSocket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../test/support/until.js';
import { createSocketServer, SOCKET_PATH, type RealtimeServer } from './socket.js';
import { ConnectRefusal, type GoneReason, type RealtimeSocket } from './socket-io.js';

interface Data {
  name: string;
}

let server: http.Server;
let realtime: RealtimeServer<Data>;
let url: string;
const clients: ClientSocket[] = [];
const events: Array<{ name: string; event: string; payload: unknown }> = [];
const gone: Array<{ name: string; reason: GoneReason }> = [];

beforeAll(async () => {
  server = http.createServer((_, res) => res.writeHead(404).end('not here'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  realtime = createSocketServer<Data>(server, {
    pingIntervalMs: 200,
    pingTimeoutMs: 200,
    claimTimeoutMs: 600,
    maxPayload: 10_000,
    authorize: async ({ auth, query, headers }) => {
      const name = auth.name ?? query.name ?? headers['x-name'];
      if (name === 'nobody') throw new ConnectRefusal('Nobody may come in', { success: false, why: 'a test' });
      if (typeof name !== 'string') throw new Error('an internal detail');
      return { name };
    },
    event: (socket, event, payload) => {
      events.push({ name: socket.data.name, event, payload });
      if (event === 'join') socket.join(String(payload));
      if (event === 'leave-room') socket.leave(String(payload));
      if (event === 'echo') socket.emit('echoed', { payload, transport: socket.session.transport });
      if (event === 'go') socket.disconnect(true);
    },
    gone: (socket, reason) => gone.push({ name: socket.data.name, reason }),
  });
});

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

afterAll(async () => {
  realtime.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function open(name: string, transports: Array<'polling' | 'websocket'>, extra: Record<string, unknown> = {}): Promise<ClientSocket> {
  const client = connectClient(url, { path: SOCKET_PATH, transports, reconnection: false, forceNew: true, auth: { name }, ...extra });
  clients.push(client);
  return new Promise((resolve, reject) => {
    client.once('connect', () => resolve(client));
    client.once('connect_error', reject);
  });
}

const next = <T>(client: ClientSocket, event: string) => new Promise<T>((resolve) => client.once(event, resolve));
const serverSocket = (client: ClientSocket) => realtime.sockets.sockets.get(client.id!) as RealtimeSocket<Data>;

describe('Socket.IO clients', () => {
  it('connects over long-polling, with events both ways', async () => {
    const client = await open('ada', ['polling']);
    expect(client.io.engine.transport.name).toBe('polling');
    expect(serverSocket(client).data).toEqual({ name: 'ada' });
    const echoed = next<unknown>(client, 'echoed');
    client.emit('echo', { text: 'héllo 👋', list: [1, 2] });
    expect(await echoed).toEqual({ payload: { text: 'héllo 👋', list: [1, 2] }, transport: 'polling' });
    // Several packets in one poll: the server's emits queued while no poll waited.
    const heard: number[] = [];
    client.on('count', (n: number) => heard.push(n));
    for (let n = 1; n <= 5; n++) serverSocket(client).emit('count', n);
    await until(() => heard.length === 5);
    expect(heard).toEqual([1, 2, 3, 4, 5]);
  });

  it('upgrades a long-polling session to WebSocket, losing nothing sent meanwhile', async () => {
    const client = await open('bob', ['polling', 'websocket']);
    const heard: number[] = [];
    client.on('count', (n: number) => heard.push(n));
    const socket = serverSocket(client);
    const upgraded = client.io.engine.transport.name === 'websocket' ? Promise.resolve() : next(client.io.engine as unknown as ClientSocket, 'upgrade');
    for (let n = 1; n <= 20; n++) socket.emit('count', n);
    await upgraded;
    for (let n = 21; n <= 25; n++) socket.emit('count', n);
    await until(() => heard.length === 25);
    expect(heard).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const echoed = next<{ transport: string }>(client, 'echoed');
    client.emit('echo', 'after');
    expect((await echoed).transport).toBe('websocket');
  });

  it('sends a room event once to each socket in any of the rooms, and to no one else', async () => {
    const [first, second, third] = await Promise.all([open('c1', ['websocket']), open('c2', ['websocket']), open('c3', ['polling'])]);
    first.emit('join', 'red');
    first.emit('join', 'blue');
    second.emit('join', 'blue');
    third.emit('join', 'red');
    await until(() => events.filter((entry) => entry.event === 'join' && entry.name.startsWith('c')).length === 4);
    const heard: string[] = [];
    for (const [client, name] of [
      [first, 'c1'],
      [second, 'c2'],
      [third, 'c3'],
    ] as const)
      client.on('news', (text: string) => heard.push(`${name}:${text}`));
    realtime.sockets.emitToRooms(['red', 'blue'], 'news', 'both');
    realtime.sockets.emitToRooms(['blue'], 'news', 'blue only');
    realtime.sockets.emitToRooms(['green'], 'news', 'nobody');
    await until(() => heard.length === 5);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heard.sort()).toEqual(['c1:both', 'c1:blue only', 'c2:both', 'c2:blue only', 'c3:both'].sort());
    first.emit('leave-room', 'blue');
    await until(() => !serverSocket(first).inRoom('blue'));
    realtime.sockets.emitToRooms(['blue'], 'news', 'again');
    await until(() => heard.length === 6);
    expect(heard.at(-1)).toBe('c2:again');
  });

  it('refuses a connection with the refusal’s message and data, and hides any other error', async () => {
    await expect(open('nobody', ['websocket'])).rejects.toMatchObject({ message: 'Nobody may come in', data: { success: false, why: 'a test' } });
    await expect(open('', ['polling'], { auth: {} })).rejects.toMatchObject({ message: 'Connection refused' });
  });

  it('reads the handshake’s query and headers', async () => {
    const client = connectClient(url, { path: SOCKET_PATH, transports: ['polling'], reconnection: false, forceNew: true, query: { name: 'from-query' } });
    clients.push(client);
    await next(client, 'connect');
    expect(serverSocket(client).data.name).toBe('from-query');
    const other = connectClient(url, { path: SOCKET_PATH, transports: ['polling'], reconnection: false, forceNew: true, extraHeaders: { 'x-name': 'from-header' } });
    clients.push(other);
    await next(other, 'connect');
    expect(serverSocket(other).data.name).toBe('from-header');
  });

  it('refuses another namespace as Socket.IO does', async () => {
    const client = connectClient(`${url}/admin`, { path: SOCKET_PATH, transports: ['websocket'], reconnection: false, forceNew: true, auth: { name: 'x' } });
    clients.push(client);
    await expect(next<Error>(client, 'connect_error')).resolves.toMatchObject({ message: 'Invalid namespace' });
  });

  it('disconnects from the server’s side on either transport, and from the client’s', async () => {
    for (const transport of ['websocket', 'polling'] as const) {
      const client = await open(`leaver-${transport}`, [transport]);
      const left = next<string>(client, 'disconnect');
      client.emit('go');
      expect(await left).toBe('io server disconnect');
      await until(() => gone.some((entry) => entry.name === `leaver-${transport}`));
      expect(gone.find((entry) => entry.name === `leaver-${transport}`)!.reason).toBe('server namespace disconnect');
    }
    const client = await open('quitter', ['websocket']);
    const id = client.id!;
    client.disconnect();
    await until(() => gone.some((entry) => entry.name === 'quitter'));
    expect(gone.find((entry) => entry.name === 'quitter')!.reason).toBe('client namespace disconnect');
    expect(realtime.sockets.sockets.has(id)).toBe(false);
  });

  it('keeps a client that answers the heartbeat', async () => {
    const client = await open('steady', ['websocket']);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(client.connected).toBe(true);
    expect(gone.some((entry) => entry.name === 'steady')).toBe(false);
  });
});

/** Raw Engine.IO over HTTP. */
async function request(query: string, init: RequestInit = {}): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${url}${SOCKET_PATH}/?${query}`, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

async function handshake(): Promise<string> {
  const { status, body } = await request('EIO=4&transport=polling');
  expect(status).toBe(200);
  expect(body.startsWith('0{')).toBe(true);
  const open = JSON.parse(body.slice(1)) as { sid: string; upgrades: string[]; pingInterval: number; pingTimeout: number; maxPayload: number };
  expect(open).toMatchObject({ upgrades: ['websocket'], pingInterval: 200, pingTimeout: 200, maxPayload: 10_000 });
  return open.sid;
}

describe('Engine.IO requests', () => {
  it('answers the protocol’s errors with its codes', async () => {
    expect(await request('EIO=4&transport=carrier-pigeon')).toMatchObject({ status: 400, body: '{"code":0,"message":"Transport unknown"}' });
    expect(await request('EIO=4&transport=polling&sid=nope')).toMatchObject({ status: 400, body: '{"code":1,"message":"Session ID unknown"}' });
    expect(await request('EIO=4&transport=polling', { method: 'POST', body: '40' })).toMatchObject({ status: 400, body: '{"code":2,"message":"Bad handshake method"}' });
    expect(await request('EIO=4&transport=websocket')).toMatchObject({ status: 400, body: '{"code":3,"message":"Bad request"}' });
    expect(await request('EIO=3&transport=polling')).toMatchObject({ status: 400, body: '{"code":5,"message":"Unsupported protocol version"}' });
  });

  it('answers CORS for any origin with credentials, and its preflight', async () => {
    const { headers } = await request('EIO=4&transport=polling', { headers: { Origin: 'https://school.example' } });
    expect(headers.get('access-control-allow-origin')).toBe('https://school.example');
    expect(headers.get('access-control-allow-credentials')).toBe('true');
    const preflight = await request('EIO=4&transport=polling', { method: 'OPTIONS', headers: { Origin: 'https://school.example', 'Access-Control-Request-Headers': 'x-access-token' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-access-token');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('joins, sends several packets in one POST, and answers them in one poll', async () => {
    const sid = await handshake();
    expect(await request(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '40{"name":"raw"}' })).toMatchObject({ status: 200, body: 'ok' });
    // Events sent before the server answered CONNECT are not the socket's yet (Socket.IO's clients wait for it).
    await until(() => [...realtime.sockets.sockets.values()].some((socket) => socket.data.name === 'raw'));
    expect(await request(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '42["echo",1]\x1e42["echo",2]' })).toMatchObject({ status: 200, body: 'ok' });
    await until(() => events.filter((entry) => entry.name === 'raw').length === 2);
    const { body } = await request(`EIO=4&transport=polling&sid=${sid}`);
    const packets = body.split('\x1e');
    expect(packets[0]).toMatch(/^40\{"sid":"[\w-]+"\}$/);
    expect(packets.slice(1)).toEqual(['42["echoed",{"payload":1,"transport":"polling"}]', '42["echoed",{"payload":2,"transport":"polling"}]']);
  });

  it('closes a session whose client polls twice at once, or sends a body over the limit', async () => {
    const sid = await handshake();
    const waiting = request(`EIO=4&transport=polling&sid=${sid}`);
    await until(() => realtime.sockets.engine.sessions.get(sid)?.poll != null);
    expect((await request(`EIO=4&transport=polling&sid=${sid}`)).status).toBe(400);
    expect((await waiting).body).toBe('1');
    expect(realtime.sockets.engine.sessions.has(sid)).toBe(false);

    const other = await handshake();
    const tooLarge = await request(`EIO=4&transport=polling&sid=${other}`, { method: 'POST', body: `42["echo","${'x'.repeat(20_000)}"]` }).catch(() => ({ status: 413 }));
    expect(tooLarge.status).toBe(413);
  });

  it('ends a connection that sends a packet that is not an event', async () => {
    const sid = await handshake();
    await request(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '40{"name":"garbled"}' });
    await until(() => [...realtime.sockets.sockets.values()].some((socket) => socket.data.name === 'garbled'));
    await request(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '42{"not":"an array"}' });
    await until(() => gone.some((entry) => entry.name === 'garbled'));
    expect(gone.find((entry) => entry.name === 'garbled')!.reason).toBe('parse error');
    const { body } = await request(`EIO=4&transport=polling&sid=${sid}`);
    expect(body.split('\x1e').at(-1)).toBe('1');
  });

  it('closes a session whose client stops answering the heartbeat', async () => {
    const sid = await handshake();
    await request(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '40{"name":"silent"}' });
    await until(() => gone.some((entry) => entry.name === 'silent'), 3_000);
    expect(gone.find((entry) => entry.name === 'silent')!.reason).toBe('ping timeout');
    // What was queued, the ping among it, then the close.
    const packets = (await request(`EIO=4&transport=polling&sid=${sid}`)).body.split('\x1e');
    expect(packets).toContain('2');
    expect(packets.at(-1)).toBe('1');
  });

  it('closes a session that never joins the namespace', async () => {
    const sid = await handshake();
    // Its pongs keep the heartbeat alive; it is the missing CONNECT that closes it.
    const started = Date.now();
    while (realtime.sockets.engine.sessions.get(sid)?.isOpen && Date.now() - started < 3_000) {
      const { body } = await request(`EIO=4&transport=polling&sid=${sid}`);
      if (body.split('\x1e').includes('2')) await request(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '3' });
    }
    expect(realtime.sockets.engine.sessions.has(sid)).toBe(false);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('leaves other paths to the HTTP server', async () => {
    const response = await fetch(`${url}/socket.iox/`);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe('not here');
  });
});
