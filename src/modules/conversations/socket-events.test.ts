// The Socket.IO contract on a listening app with socket.io-client: token in the handshake, REGISTER
// only for the signed-in user, RECEIVE_STREAM to the right socket only, cancel_streaming and its
// reset, cancel_request reaching onCancel, which sockets this process holds (after UNSUBSCRIBE and
// disconnect), revocation, connect_timeout for a socket that never registers.
import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { collect, connectSocket, nextEvent, register, type ConnectOptions } from '../../../test/support/socket-client.js';
import type { PersonTabs } from '../../platform/realtime/person-tabs.js';
import type { SseStream } from '../../platform/realtime/sse.js';
import type { CancelRequest, StreamPayload } from './socket-events.js';
import { until } from '../../../test/support/until.js';

let testApp: TestApp;
let base: string;
let ada: BuiltUser;
let bob: BuiltUser;
let adaToken: string;
let bobToken: string;
const open: Socket[] = [];

beforeAll(async () => {
  testApp = await startTestApp();
  base = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  const db = testApp.platform.database.db;
  [ada, bob] = await Promise.all([buildUser(db), buildUser(db)]);
  [adaToken, bobToken] = await Promise.all([signIn(testApp.app, ada.user.email), signIn(testApp.app, bob.user.email)]);
});
afterEach(() => {
  for (const socket of open.splice(0)) socket.close();
});
afterAll(() => testApp?.close());

async function connect(token: string, options: Parameters<typeof connectSocket>[1] = { auth: { token } }): Promise<Socket> {
  const socket = await connectSocket(base, options);
  open.push(socket);
  return socket;
}

async function registered(person: BuiltUser, token: string): Promise<Socket> {
  const socket = await connect(token);
  expect((await register(socket, person.user.id)).event).toBe('connect_success');
  return socket;
}

const chunk = (prompt: string, delta: string): StreamPayload => ({ prompt, delta, type: 'STREAM' });

/**
 * Events of one socket are handled in order and the bus delivers in publish order, so once a
 * cancel_request sent afterwards reaches onCancel, the earlier event has been applied too.
 */
async function processed(socket: Socket, person: BuiltUser): Promise<void> {
  const { streams } = testApp.app;
  const marker = new Promise<void>((resolve) => {
    const off = streams.onCancel({ userId: person.user.id, socketId: socket.id! }, () => {
      off();
      resolve();
    });
  });
  socket.emit('cancel_request', {});
  await marker;
}

describe('socket handshake', () => {
  it('refuses a connection without a token or with a bad one', async () => {
    await expect(connectSocket(base)).rejects.toMatchObject({ message: 'Authentication Required' });
    await expect(connectSocket(base, { auth: { token: 'nope' } })).rejects.toMatchObject({
      message: 'Invalid or expired token',
      data: { success: false, message: 'Invalid or expired token' },
    });
  });

  it('takes the token from auth.token, the x-access-token header, a Bearer header or ?token=', async () => {
    const ways: ConnectOptions[] = [
      { auth: { token: adaToken } },
      { headers: { 'x-access-token': adaToken } },
      { headers: { authorization: `Bearer ${adaToken}` } },
      { query: { token: adaToken } },
    ];
    for (const options of ways) {
      const socket = await connect(adaToken, options);
      expect((await register(socket, ada.user.id)).event).toBe('connect_success');
    }
  });
});

describe('REGISTER', () => {
  it("answers connect_success for the signed-in user's own id", async () => {
    const socket = await connect(adaToken);
    const outcome = await register(socket, ada.user.id);
    expect(outcome).toEqual({ event: 'connect_success', payload: { success: true, message: 'Registered', socketId: socket.id } });
    expect(testApp.app.streams.holds(socket.id!, ada.user.id)).toBe(true);
  });

  it("refuses another person's id with an error event, and the socket stays unregistered", async () => {
    const socket = await connect(adaToken);
    const outcome = await register(socket, bob.user.id);
    expect(outcome).toEqual({
      event: 'error',
      payload: { success: false, message: 'REGISTER refused: the user does not match the signed-in session', code: 'SOCKET_USER_MISMATCH' },
    });
    expect(testApp.app.streams.holds(socket.id!, bob.user.id)).toBe(false);
    expect(testApp.app.streams.holds(socket.id!, ada.user.id)).toBe(false);
  });

  it('refuses a payload without a user id', async () => {
    const socket = await connect(adaToken);
    const outcome = new Promise((resolve) => socket.once('error', resolve));
    socket.emit('REGISTER', 'not an object');
    expect(await outcome).toMatchObject({ code: 'SOCKET_USER_MISMATCH' });
  });
});

describe('holds', () => {
  it('is false before REGISTER, after UNSUBSCRIBE, after disconnect and for an unknown id', async () => {
    const { streams } = testApp.app;
    const socket = await connect(adaToken);
    const id = socket.id!;
    expect(streams.holds(id, ada.user.id)).toBe(false);

    await register(socket, ada.user.id);
    expect(streams.holds(id, ada.user.id)).toBe(true);
    expect(streams.holds(id, bob.user.id)).toBe(false);

    socket.emit('UNSUBSCRIBE', { userId: ada.user.id });
    await until(() => !streams.holds(id, ada.user.id));

    await register(socket, ada.user.id);
    expect(streams.holds(id, ada.user.id)).toBe(true);
    socket.close();
    await until(() => !streams.holds(id, ada.user.id));
    expect(streams.holds('no-such-socket', ada.user.id)).toBe(false);
  });
});

describe('RECEIVE_STREAM', () => {
  it("reaches only the socket the request named, not the user's other tab nor another user", async () => {
    const { streams } = testApp.app;
    const [tab1, tab2, other] = await Promise.all([registered(ada, adaToken), registered(ada, adaToken), registered(bob, bobToken)]);
    const [got1, got2, gotOther] = [collect<StreamPayload>(tab1, 'RECEIVE_STREAM'), collect(tab2, 'RECEIVE_STREAM'), collect(other, 'RECEIVE_STREAM')];

    streams.beginAnswer(tab1.id!);
    expect(streams.emitChunk(tab1.id!, chunk('Hel', 'Hel'))).toBe(true);
    expect(streams.emitChunk(tab1.id!, chunk('Hello', 'lo'))).toBe(true);
    streams.endAnswer(tab1.id!);

    await until(() => got1.length === 2);
    expect(got1).toEqual([chunk('Hel', 'Hel'), chunk('Hello', 'lo')]);
    // Give a stray broadcast time to arrive before asserting nothing came.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(got2).toEqual([]);
    expect(gotOther).toEqual([]);
  });

  it('emitToUser reaches every registered tab of that user only', async () => {
    const [tab1, tab2, other] = await Promise.all([registered(ada, adaToken), registered(ada, adaToken), registered(bob, bobToken)]);
    const gotOther = collect(other, 'TOOL_APPROVAL');
    const both = Promise.all([nextEvent(tab1, 'TOOL_APPROVAL'), nextEvent(tab2, 'TOOL_APPROVAL')]);
    const card = { approvalId: 'a1', server: 'crm', tool: 'lookup', arguments: { q: 'x' }, expiresAt: new Date(0).toISOString(), historyId: 'h1', conversationId: 'c1' };
    testApp.app.streams.emitToUser(ada.user.id, ada.twin!.id, 'TOOL_APPROVAL', card);
    expect(await both).toEqual([card, card]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(gotOther).toEqual([]);
  });
});

describe('the client frame map', () => {
  it('checks each frame on both transports at compile time', () => {
    const { streams } = testApp.app;
    // Checked by the compiler only (never called): each line fails to compile without its comment.
    const refused = (tabs: PersonTabs, sse: SseStream) => [
      // @ts-expect-error: a Socket.IO event no frame declares
      streams.emitEvent('s1', 'TOOL_STATE', { name: 'lookup', status: 'running' }),
      // @ts-expect-error: a payload of another shape than the event's
      streams.emitEvent('s1', 'TOOL_STATUS', { name: 'lookup' }),
      // @ts-expect-error: an SSE frame type no family declares
      sse.send({ type: 'resumed', seq: 1 }),
      // @ts-expect-error: an SSE frame with the fields of another type
      sse.send({ type: 'tool', prompt: 'x', delta: 'x' }),
      // @ts-expect-error: a tab event whose Socket.IO half and SSE half are different frames
      tabs.send('u1', { socket: ['TOOL_APPROVAL_DECIDED', { approvalId: 'a', decision: 'deny', decidedAt: '' }], frame: { type: 'approval', approvalId: 'a', server: '', tool: '', arguments: null, expiresAt: '', historyId: '', conversationId: '' } }),
    ];
    expect(typeof refused).toBe('function');
  });
});

describe('cancel_streaming', () => {
  it('stops the chunks of the current answer only, and beginAnswer clears it for the next', async () => {
    const { streams } = testApp.app;
    const socket = await registered(ada, adaToken);
    const got = collect<StreamPayload>(socket, 'RECEIVE_STREAM');
    const id = socket.id!;

    streams.beginAnswer(id);
    expect(streams.emitChunk(id, chunk('a', 'a'))).toBe(true);
    await until(() => got.length === 1);
    socket.emit('cancel_streaming', { userId: ada.user.id });
    await processed(socket, ada);
    expect(streams.emitChunk(id, chunk('ab', 'b'))).toBe(false);
    expect(streams.emitChunk(id, chunk('abc', 'c'))).toBe(false);
    streams.endAnswer(id);

    streams.beginAnswer(id);
    expect(streams.emitChunk(id, chunk('next', 'next'))).toBe(true);
    await until(() => got.some((p) => p.prompt === 'next'));
    expect(got.map((p) => p.prompt)).toEqual(['a', 'next']);
    streams.endAnswer(id);
  });

  it('does nothing to an answer on another socket', async () => {
    const { streams } = testApp.app;
    const [tab1, tab2] = await Promise.all([registered(ada, adaToken), registered(ada, adaToken)]);
    streams.beginAnswer(tab1.id!);
    tab2.emit('cancel_streaming', {});
    await processed(tab2, ada);
    expect(streams.emitChunk(tab1.id!, chunk('still', 'still'))).toBe(true);
    streams.endAnswer(tab1.id!);
  });
});

describe('cancel_request', () => {
  it('reaches the onCancel of the turn on that socket, not turns of other sockets or users', async () => {
    const { streams } = testApp.app;
    const [tab1, tab2] = await Promise.all([registered(ada, adaToken), registered(ada, adaToken)]);
    const seen: Array<[string, CancelRequest]> = [];
    const offs = [
      streams.onCancel({ userId: ada.user.id, socketId: tab1.id! }, (c) => seen.push(['turn on tab1', c])),
      streams.onCancel({ userId: ada.user.id, socketId: tab2.id! }, (c) => seen.push(['turn on tab2', c])),
      streams.onCancel({ userId: bob.user.id }, (c) => seen.push(['bob', c])),
      streams.onCancel({ userId: ada.user.id }, (c) => seen.push(['any of ada', c])),
    ];
    tab1.emit('cancel_request', { userId: ada.user.id });
    await until(() => seen.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([
      ['turn on tab1', { userId: ada.user.id, socketId: tab1.id }],
      ['any of ada', { userId: ada.user.id, socketId: tab1.id }],
    ]);

    offs[0]();
    seen.length = 0;
    tab1.emit('cancel_request', { userId: ada.user.id });
    await until(() => seen.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.map(([who]) => who)).toEqual(['any of ada']);
    offs.forEach((off) => off());
  });

  it("from a launch session's socket reaches turns of its twin only", async () => {
    const { streams } = testApp.app;
    const db = testApp.platform.database.db;
    const elsewhere = await buildTwin(db);
    const admin = await signIn(testApp.app, (await buildUser(db, { twin: elsewhere, role: 'admin' })).user.email);
    const signed = await testApp.app.inject({ method: 'POST', url: '/api/auth/sdk-sign', headers: { 'x-access-token': admin }, payload: { email: ada.user.email } });
    const verified = await testApp.app.inject({ method: 'POST', url: '/api/auth/sdk-verify', payload: { token: signed.json().token } });
    expect(verified.statusCode).toBe(200);
    const launched = await registered(ada, verified.json().token);
    const seen: string[] = [];
    const offs = [
      streams.onCancel({ userId: ada.user.id, twinId: ada.twin!.id }, () => seen.push('turn in her own twin')),
      streams.onCancel({ userId: ada.user.id, twinId: elsewhere.id }, () => seen.push('turn in the launch twin')),
    ];
    launched.emit('cancel_request', { userId: ada.user.id });
    await until(() => seen.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual(['turn in the launch twin']);
    offs.forEach((off) => off());
  });

  it('is refused with an error from a socket that has not registered', async () => {
    const socket = await connect(bobToken);
    const error = nextEvent(socket, 'error');
    socket.emit('cancel_request', { userId: bob.user.id });
    expect(await error).toEqual({ success: false, message: 'Send REGISTER first', code: 'SOCKET_NOT_REGISTERED' });
  });
});

describe('revocation', () => {
  it('disconnects the sockets of a session that signs out', async () => {
    const person = await buildUser(testApp.platform.database.db);
    const token = await signIn(testApp.app, person.user.email);
    const socket = await registered(person, token);
    const gone = nextEvent(socket, 'disconnect');
    const other = await registered(ada, adaToken);

    const out = await testApp.app.inject({ method: 'POST', url: '/api/auth/signout', headers: { 'x-access-token': token } });
    expect(out.statusCode).toBe(200);
    expect(await gone).toBe('io server disconnect');
    expect(other.connected).toBe(true);
    await expect(connectSocket(base, { auth: { token } })).rejects.toMatchObject({ message: 'Invalid or expired token' });
  });
});

describe('connect_timeout', () => {
  it('tells a socket that did not REGISTER in time why, then disconnects it; a registered one stays', async () => {
    const quick = await startTestApp({ socketRegisterTimeoutMs: 300 });
    try {
      const quickBase = await quick.app.listen({ port: 0, host: '127.0.0.1' });
      const person = await buildUser(quick.platform.database.db);
      const token = await signIn(quick.app, person.user.email);
      const [silent, polite] = await Promise.all([connectSocket(quickBase, { auth: { token } }), connectSocket(quickBase, { auth: { token } })]);
      open.push(silent, polite);
      expect((await register(polite, person.user.id)).event).toBe('connect_success');
      const gone = nextEvent(silent, 'disconnect');

      expect(await nextEvent(silent, 'connect_timeout')).toEqual({
        success: false,
        message: 'REGISTER was not received within 0.3 seconds of connecting; connect again and send REGISTER',
        code: 'REGISTER_TIMEOUT',
      });
      expect(await gone).toBe('io server disconnect');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(polite.connected).toBe(true);
    } finally {
      await quick.close();
    }
  });
});
