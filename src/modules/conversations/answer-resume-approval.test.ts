// An approval card is one of its answer's numbered frames (contract: resumable answers): live it carries
// seq and historyId on both transports (once on the asking stream, with its `id:` line, and so does its
// decision), and a resume of
// an answer waiting on the card, over SSE or a socket, replays the card with the same seq, then follows
// the decision (approval_decided) and the rest to done. A real MCP server on loopback with a connector
// that requires approval; on the database of the run (PGlite, or PostgreSQL + Redis).
import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { askQanda } from '../../../test/support/http.js';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import { collect, connectSocket, register } from '../../../test/support/socket-client.js';
import { readSse, type SseReader } from '../../../test/support/sse-client.js';
import { until } from '../../../test/support/until.js';
import type { TwinRow } from '../twins/twins.tables.js';

let t: TestApp;
let model: FakeModelServer;
let mcp: TestMcpServer;
let base: string;
let twin: TwinRow;
let echo: string;
const sockets: Socket[] = [];
const readers: SseReader[] = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'tools-secret' });
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', CONNECTOR_ALLOWED_HOSTS: '127.0.0.1' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  twin = await buildTwin(db());
  const admin = await signIn(t.app, (await buildUser(db(), { twin, role: 'admin' })).user.email);
  const created = await api('POST', '/api/admin/mcp-server', admin, { name: 'Desk', url: mcp.url, credential: 'tools-secret', requireApproval: true });
  expect(created.status).toBe(201);
  const listed = (await api('GET', '/api/admin/tools', admin)).body.data as Array<{ name: string; tool: string }>;
  echo = listed.find((tool) => tool.tool === 'echo')!.name;
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  for (const reader of readers.splice(0)) await reader.cancel();
});
afterAll(async () => {
  await t?.close();
  await mcp?.close();
  await model?.close();
});

const db = () => t.platform.database.db;
type Frame = Record<string, unknown>;

async function api(method: string, url: string, token: string, payload?: object) {
  const response = await t.app.inject({ method: method as 'GET', url, payload, headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

async function member() {
  const built = await buildUser(db(), { twin });
  return { id: built.user.id, token: await signIn(t.app, built.user.email) };
}

/** The model calls echo (which waits for a decision), then answers. */
function scriptEchoTurn(): void {
  model.enqueue({ toolCalls: [{ id: `call_${Date.now()}`, name: echo, arguments: { text: 'hello' } }] });
  model.enqueue({ chunks: ['Echoed.'] });
}

async function sse(url: string, token: string, init: RequestInit = {}): Promise<SseReader> {
  const response = await fetch(`${base}${url}`, { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  const reader = readSse(response);
  readers.push(reader);
  return reader;
}

const ask = (token: string) =>
  sse('/api/ai/personal-stream/qanda-stream', token, { method: 'POST', body: JSON.stringify({ inputs: ['Echo hello'], requestArgs: { resumable: true } }) });

/** Reads frames up to and including the first of `type`. */
async function readUntil(reader: SseReader, type: string): Promise<Frame[]> {
  const frames: Frame[] = [];
  for (let frame = await reader.next(); frame; frame = await reader.next()) {
    frames.push(frame);
    if (frame.type === type) return frames;
  }
  throw new Error(`the stream ended without ${type}`);
}

/**
 * How long a test waits for a socket's event: the turn goes through the model server, the connector and
 * the database, which the PostgreSQL run's two workers share with the server on two cores.
 */
const SOCKET_WAIT_MS = 10_000;

/** Every event the socket hears, by name and payload: what a failed wait shows. */
function hearAll(socket: Socket): Array<[string, unknown]> {
  const heard: Array<[string, unknown]> = [];
  socket.onAny((event: string, payload: unknown) => heard.push([event, payload]));
  return heard;
}

const seqs = (frames: Frame[]) => frames.filter((frame) => frame.seq !== undefined).map((frame) => frame.seq);

describe('an approval card in a resumable answer', () => {
  it('is numbered once on the asking stream, and a resume over SSE while it waits replays it, then follows the decision to done', async () => {
    const ada = await member();
    scriptEchoTurn();
    const asking = await ask(ada.token);
    const live = await readUntil(asking, 'approval');
    const card = live.at(-1)!;
    const historyId = live.find((frame) => frame.type === 'started')!.historyId as string;
    expect(card).toMatchObject({ type: 'approval', historyId, tool: 'echo', seq: live.length - 1 });
    expect(asking.lastEventId).toBe(`${historyId}:${card.seq}`);
    // The frames so far are 1, 2, ... without a gap: the card took its place in the answer.
    expect(seqs(live)).toEqual(Array.from({ length: live.length - 1 }, (_, i) => i + 1));

    const resumed = await sse(`/api/ai/stream/${historyId}?after=${(card.seq as number) - 1}`, ada.token);
    expect(await resumed.next()).toEqual(card);

    expect((await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' })).status).toBe(200);
    const rest = await resumed.rest();
    expect(rest[0]).toMatchObject({ type: 'approval_decided', approvalId: card.approvalId, decision: 'approve', seq: (card.seq as number) + 1, historyId });
    expect(rest.at(-2)).toMatchObject({ type: 'complete', outputs: ['Echoed.'] });
    expect(rest.at(-1)).toMatchObject({ type: 'done' });
    expect(seqs(rest)).toEqual(Array.from({ length: rest.length }, (_, i) => (card.seq as number) + 1 + i));

    // The asking stream saw the card once and its decision once (numbered, not again through the tabs),
    // and the same frames as the resume after it.
    const askingRest = await asking.rest();
    expect([...live, ...askingRest].filter((frame) => frame.type === 'approval')).toHaveLength(1);
    expect(askingRest.filter((frame) => frame.type === 'approval_decided')).toEqual([rest[0]]);
    expect(askingRest).toEqual(rest);
  });

  it("replays TOOL_APPROVAL with seq and historyId to a socket's RESUME_STREAM while the card waits", async () => {
    const ada = await member();
    scriptEchoTurn();
    const asking = await ask(ada.token);
    const card = (await readUntil(asking, 'approval')).at(-1)!;
    const socket = await connectSocket(base, { auth: { token: ada.token } });
    sockets.push(socket);
    expect((await register(socket, ada.id)).event).toBe('connect_success');
    const cards = collect<Frame>(socket, 'TOOL_APPROVAL');
    const decided = collect<Frame>(socket, 'TOOL_APPROVAL_DECIDED');
    const done = collect<Frame>(socket, 'STREAM_DONE');
    const heard = hearAll(socket);
    socket.emit('RESUME_STREAM', { historyId: card.historyId, afterSeq: 0 });
    // A refused resume says why on the socket's error event (or the answer ends): the test shows what came.
    await until(() => cards.length === 1, SOCKET_WAIT_MS, () => heard);
    const { type: _type, ...payload } = card;
    expect(cards[0]).toEqual(payload);

    await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'deny' });
    await until(() => done.length === 1, SOCKET_WAIT_MS, () => heard);
    // Once from the resume (the answer's frame), once from the person's tabs (this socket is one).
    expect(decided.every((event) => event.approvalId === card.approvalId && event.decision === 'deny')).toBe(true);
    expect(decided.length).toBeGreaterThanOrEqual(1);
  });

  it('sends a Socket.IO turn\'s TOOL_APPROVAL with seq and historyId, and an SSE resume replays the same card', async () => {
    const ada = await member();
    const socket = await connectSocket(base, { auth: { token: ada.token } });
    sockets.push(socket);
    expect((await register(socket, ada.id)).event).toBe('connect_success');
    const cards = collect<Frame>(socket, 'TOOL_APPROVAL');
    const statuses = collect<Frame>(socket, 'TOOL_STATUS');
    const heard = hearAll(socket);
    scriptEchoTurn();
    const answer = askQanda(base, ada.token, { inputs: ['Echo from a socket'], requestArgs: { socketId: socket.id } });
    // The request answers only after the decision: one that answered first failed, and says how.
    let early: unknown;
    void answer.then((response) => (early = response.body));
    await until(() => cards.length === 1 || early !== undefined, SOCKET_WAIT_MS, () => heard);
    expect(early).toBeUndefined();
    const card = cards[0];
    expect(card).toMatchObject({ tool: 'echo', historyId: expect.any(String), seq: expect.any(Number) });
    // The card comes after the call's awaiting_approval status, in the answer's numbering.
    expect(statuses.at(-1)).toMatchObject({ status: 'awaiting_approval', historyId: card.historyId });
    expect(card.seq).toBeGreaterThan(statuses.at(-1)!.seq as number);

    const resumed = await sse(`/api/ai/stream/${card.historyId}?after=${(card.seq as number) - 1}`, ada.token);
    expect(await resumed.next()).toEqual({ type: 'approval', ...card });
    await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' });
    expect((await answer).body).toMatchObject({ success: true, answer: 'Echoed.' });
    expect(cards).toHaveLength(1);
    const rest = await resumed.rest();
    expect(rest.at(-1)).toMatchObject({ type: 'done' });
  });
});
