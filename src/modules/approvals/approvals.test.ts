// Behaviour 5 end to end: a model calls a connector tool that requires approval; the card reaches two
// Socket.IO tabs and the SSE stream of the person at once; nothing runs before a decision (the MCP
// server's own call count); each decision (approve, approve for the conversation, deny), expiry and a
// cancelled turn; the record of the decision on the message; 409 for a second decision, 404 for another
// person's card. A real MCP server (the SDK's classes) and the fake model server on loopback.
import { eq } from 'drizzle-orm';
import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import { collect, connectSocket, register } from '../../../test/support/socket-client.js';
import { readSse, type SseReader } from '../../../test/support/sse-client.js';
import { until } from '../../../test/support/until.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { history } from '../history/history.tables.js';
import { TOOL_RESULT_TEXT } from '../conversations/turn-tools.js';
import { unnumbered } from '../../../test/support/frames.js';

let t: TestApp;
let model: FakeModelServer;
let mcp: TestMcpServer;
let base: string;
let twin: TwinRow;
let echoKey: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'approval-secret' });
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', CONNECTOR_ALLOWED_HOSTS: '127.0.0.1', APPROVAL_TIMEOUT_MS: '1500', SSE_HEARTBEAT_MS: '200' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  twin = await buildTwin(t.platform.database.db);
  const admin = await signIn(t.app, (await buildUser(t.platform.database.db, { twin, role: 'admin' })).user.email);
  const created = await api('POST', '/api/admin/mcp-server', admin, { name: 'Calendar', url: mcp.url, credential: 'approval-secret', requireApproval: true });
  expect(created.status).toBe(201);
  const tools = await api('GET', '/api/admin/tools', admin);
  echoKey = (tools.body.data as Array<{ name: string; tool: string }>).find((tool) => tool.tool === 'echo')!.name;
});
afterAll(async () => {
  for (const socket of sockets) socket.close();
  await t?.close();
  await mcp?.close();
  await model?.close();
});

async function api(method: string, url: string, token: string, payload?: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await t.app.inject({ method: method as 'GET', url, payload, headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() };
}

async function person() {
  const built = await buildUser(t.platform.database.db, { twin });
  return { id: built.user.id, token: await signIn(t.app, built.user.email) };
}

/** A registered Socket.IO tab of the person, with what it receives. */
async function tab(who: { id: string; token: string }) {
  const socket = await connectSocket(base, { auth: { token: who.token } });
  sockets.push(socket);
  expect((await register(socket, who.id)).event).toBe('connect_success');
  return { socket, cards: collect<Record<string, unknown>>(socket, 'TOOL_APPROVAL'), decided: collect<Record<string, unknown>>(socket, 'TOOL_APPROVAL_DECIDED') };
}

function askSse(token: string, question: string, extra: Record<string, unknown> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs: extra }),
    signal,
  });
}

/** Reads frames until one of `type` arrives; returns every frame read. */
async function readUntil(reader: SseReader, type: string, seen: Array<Record<string, unknown>> = []) {
  for (let frame = await reader.next(); frame; frame = await reader.next()) {
    seen.push(frame);
    if (frame.type === type) return seen;
  }
  throw new Error(`the stream ended before a ${type} frame: ${JSON.stringify(seen)}`);
}

const callEcho = (id: string, text: string) => model.enqueue({ toolCalls: [{ id, name: echoKey, arguments: { text } }] });
const recordOf = async (id: string) => (await t.platform.database.db.select().from(history).where(eq(history.id, id)))[0];

describe('approval cards in every tab', () => {
  it('sends the card to two socket tabs and the SSE stream, runs nothing before the decision, then runs on approve', async () => {
    const ada = await person();
    const [tab1, tab2] = [await tab(ada), await tab(ada)];
    callEcho('call_a1', 'hello calendar');
    model.enqueue({ chunks: ['Done: ', 'hello calendar.'] });
    const reader = readSse(await askSse(ada.token, 'Echo hello calendar'));
    const frames = await readUntil(reader, 'approval');
    const card = frames.at(-1)!;
    expect(card).toMatchObject({ type: 'approval', server: 'Calendar', tool: 'echo', arguments: { text: 'hello calendar' }, approvalId: expect.any(String), expiresAt: expect.any(String) });
    expect(frames.map(unnumbered)).toContainEqual({ type: 'tool', name: echoKey, status: 'awaiting_approval' });
    await until(() => tab1.cards.length === 1 && tab2.cards.length === 1);
    for (const received of [tab1.cards[0], tab2.cards[0]]) expect(received).toMatchObject({ approvalId: card.approvalId, server: 'Calendar', tool: 'echo' });
    // A tab opened now lists the card; nothing has run.
    const pending = await api('GET', '/api/user/approvals', ada.token);
    expect(pending.body.approvals).toEqual([expect.objectContaining({ approvalId: card.approvalId, arguments: { text: 'hello calendar' } })]);
    expect(mcp.calls('echo')).toBe(0);

    const decided = await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' });
    expect(decided).toEqual({ status: 200, body: { success: true, decision: 'approve' } });
    const rest = await reader.rest();
    // The asking stream hears the decision once: numbered as its answer's next frame.
    expect(rest.filter((frame) => frame.type === 'approval_decided')).toEqual([
      { type: 'approval_decided', approvalId: card.approvalId, decision: 'approve', decidedAt: expect.any(String), seq: (card.seq as number) + 1, historyId: card.historyId },
    ]);
    expect(rest.map(unnumbered)).toContainEqual({ type: 'tool', name: echoKey, status: 'started' });
    expect(rest.map(unnumbered)).toContainEqual({ type: 'tool', name: echoKey, status: 'completed' });
    const complete = rest.find((frame) => frame.type === 'complete')!;
    expect(complete.outputs).toEqual(['Done: hello calendar.']);
    expect(mcp.calls('echo')).toBe(1);
    await until(() => tab1.decided.length === 1 && tab2.decided.length === 1);
    expect(tab2.decided[0]).toMatchObject({ approvalId: card.approvalId, decision: 'approve' });
    // The model read the tool's answer; the message records the call and the decision.
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain('hello calendar');
    const record = await recordOf(complete.historyId as string);
    expect(record.toolCalls).toEqual([
      expect.objectContaining({ server: 'Calendar', tool: 'echo', status: 'ok', approval: expect.objectContaining({ approvalId: card.approvalId, decision: 'approve', decidedBy: ada.id }) }),
    ]);
    // Decided once: never pending again, and a second decision is refused.
    expect((await api('GET', '/api/user/approvals', ada.token)).body.approvals).toEqual([]);
    const again = await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'deny' });
    expect(again).toMatchObject({ status: 409, body: { success: false, code: 'APPROVAL_DECIDED' } });
  });

  it('on deny: the tool never runs, the model is told it was declined by the user and answers', async () => {
    const ada = await person();
    const [tab1, tab2] = [await tab(ada), await tab(ada)];
    callEcho('call_d1', 'secret');
    model.enqueue({ chunks: ['Alright, I will not.'] });
    const before = mcp.calls('echo');
    const reader = readSse(await askSse(ada.token, 'Echo secret'));
    const card = (await readUntil(reader, 'approval')).at(-1)!;
    // Another person cannot see or decide the card.
    const bob = await person();
    expect(await api('POST', `/api/ai/approval/${card.approvalId}`, bob.token, { decision: 'approve' })).toMatchObject({ status: 404, body: { code: 'APPROVAL_NOT_FOUND' } });
    expect((await api('GET', '/api/user/approvals', bob.token)).body.approvals).toEqual([]);
    expect(await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'deny' })).toMatchObject({ status: 200, body: { decision: 'deny' } });
    const rest = await reader.rest();
    expect(rest.map(unnumbered)).toContainEqual({ type: 'tool', name: echoKey, status: 'declined' });
    expect(rest.some((frame) => frame.type === 'tool' && frame.status === 'started')).toBe(false);
    expect(rest.find((frame) => frame.type === 'complete')!.outputs).toEqual(['Alright, I will not.']);
    expect(mcp.calls('echo')).toBe(before);
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain(TOOL_RESULT_TEXT.declined);
    await until(() => tab1.decided.length === 1 && tab2.decided.length === 1);
    expect(tab1.cards).toEqual([expect.objectContaining({ approvalId: card.approvalId })]);
    expect(tab2.cards).toEqual([expect.objectContaining({ approvalId: card.approvalId })]);
    for (const each of [tab1, tab2]) expect(each.decided[0]).toMatchObject({ approvalId: card.approvalId, decision: 'deny' });
    const record = await recordOf(rest.find((frame) => frame.type === 'complete')!.historyId as string);
    expect(record.toolCalls[0]).toMatchObject({ status: 'declined', approval: { decision: 'deny', decidedBy: ada.id } });
  });

  it("reaches a launch session's tab of the card's twin, never one of another twin", async () => {
    const db = t.platform.database.db;
    const built = await buildUser(db, { twin });
    const ada = { id: built.user.id, token: await signIn(t.app, built.user.email) };
    /** A launch session of `where` for Ada, opened by an administrator of that twin. */
    const launchedIn = async (where: TwinRow) => {
      const admin = await signIn(t.app, (await buildUser(db, { twin: where, role: 'admin' })).user.email);
      const signed = await api('POST', '/api/auth/sdk-sign', admin, { email: built.user.email });
      const verified = await api('POST', '/api/auth/sdk-verify', admin, { token: signed.body.token });
      expect(verified.status).toBe(200);
      return tab({ id: ada.id, token: verified.body.token as string });
    };
    const [full, sameTwin, otherTwin] = [await tab(ada), await launchedIn(twin), await launchedIn(await buildTwin(db))];
    callEcho('call_l1', 'private words');
    model.enqueue({ chunks: ['Declined.'] });
    const reader = readSse(await askSse(ada.token, 'Echo private words'));
    const card = (await readUntil(reader, 'approval')).at(-1)!;
    await until(() => full.cards.length === 1 && sameTwin.cards.length === 1);
    expect(await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'deny' })).toMatchObject({ status: 200 });
    await reader.rest();
    await until(() => full.decided.length === 1 && sameTwin.decided.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 150)); // a stray event would have arrived by now
    expect(otherTwin.cards).toEqual([]);
    expect(otherTwin.decided).toEqual([]);
  });

  it('approve for this conversation: later calls of that tool in the same conversation run without a card, a new conversation asks again', async () => {
    const ada = await person();
    const [tab1, tab2] = [await tab(ada), await tab(ada)];
    callEcho('call_c1', 'one');
    model.enqueue({ chunks: ['First.'] });
    const first = readSse(await askSse(ada.token, 'Echo one'));
    const card = (await readUntil(first, 'approval')).at(-1)!;
    await until(() => tab1.cards.length === 1 && tab2.cards.length === 1);
    await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve_conversation' });
    const firstRest = await first.rest();
    expect(firstRest).toContainEqual(expect.objectContaining({ type: 'approval_decided', approvalId: card.approvalId, decision: 'approve_conversation' }));
    await until(() => tab1.decided.length === 1 && tab2.decided.length === 1);
    for (const each of [tab1, tab2]) expect(each.decided[0]).toMatchObject({ approvalId: card.approvalId, decision: 'approve_conversation' });
    const conversationId = firstRest.find((frame) => frame.type === 'complete')!.conversationId as string;
    const before = mcp.calls('echo');

    callEcho('call_c2', 'two');
    model.enqueue({ chunks: ['Second.'] });
    const second = await readSse(await askSse(ada.token, 'Echo two', { conversationId })).rest();
    expect(second.some((frame) => frame.type === 'approval')).toBe(false);
    expect(tab1.cards).toHaveLength(1);
    expect(second.find((frame) => frame.type === 'complete')!.outputs).toEqual(['Second.']);
    expect(mcp.calls('echo')).toBe(before + 1);
    const record = await recordOf(second.find((frame) => frame.type === 'complete')!.historyId as string);
    expect(record.toolCalls[0]).toMatchObject({ status: 'ok', approval: { approvalId: null, decision: 'approve_conversation' } });

    callEcho('call_c3', 'three');
    model.enqueue({ chunks: ['Third.'] });
    const other = readSse(await askSse(ada.token, 'Echo three'));
    const asked = (await readUntil(other, 'approval')).at(-1)!;
    await api('POST', `/api/ai/approval/${asked.approvalId}`, ada.token, { decision: 'deny' });
    await other.rest();
  });

  it('expires after APPROVAL_TIMEOUT_MS as a deny: the tool does not run, every tab hears "expired", a late decision is refused', async () => {
    const ada = await person();
    const tab1 = await tab(ada);
    callEcho('call_e1', 'late');
    model.enqueue({ chunks: ['No answer came.'] });
    const before = mcp.calls('echo');
    const reader = readSse(await askSse(ada.token, 'Echo late'));
    const card = (await readUntil(reader, 'approval')).at(-1)!;
    const rest = await reader.rest();
    expect(rest).toContainEqual(expect.objectContaining({ type: 'approval_decided', approvalId: card.approvalId, decision: 'expired' }));
    expect(rest.map(unnumbered)).toContainEqual({ type: 'tool', name: echoKey, status: 'declined' });
    expect(mcp.calls('echo')).toBe(before);
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain(TOOL_RESULT_TEXT.expired);
    await until(() => tab1.decided.length === 1);
    expect(tab1.decided[0]).toMatchObject({ decision: 'expired' });
    expect(await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' })).toMatchObject({ status: 409 });
    const record = await recordOf(rest.find((frame) => frame.type === 'complete')!.historyId as string);
    expect(record.toolCalls[0]).toMatchObject({ status: 'declined', approval: { decision: 'expired', decidedBy: null } });
  });

  it('a cancelled turn cancels its pending card: the tabs hear it, it is never listed, the tool does not run', async () => {
    const ada = await person();
    const tab1 = await tab(ada);
    callEcho('call_x1', 'never');
    const before = mcp.calls('echo');
    const controller = new AbortController();
    const reader = readSse(await askSse(ada.token, 'Echo never', {}, controller.signal));
    const card = (await readUntil(reader, 'approval')).at(-1)!;
    controller.abort();
    await until(() => tab1.decided.length === 1);
    expect(tab1.decided[0]).toMatchObject({ approvalId: card.approvalId, decision: 'cancelled' });
    expect((await api('GET', '/api/user/approvals', ada.token)).body.approvals).toEqual([]);
    expect(await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' })).toMatchObject({ status: 409 });
    expect(mcp.calls('echo')).toBe(before);
  });

  it('refuses a decision that is not one of the three, and an id that names no card', async () => {
    const ada = await person();
    expect(await api('POST', '/api/ai/approval/0123456789abcdef01234567', ada.token, { decision: 'maybe' })).toMatchObject({ status: 400 });
    expect(await api('POST', '/api/ai/approval/0123456789abcdef01234567', ada.token, { decision: 'approve' })).toMatchObject({ status: 404, body: { code: 'APPROVAL_NOT_FOUND' } });
    expect(await api('POST', '/api/ai/approval/not-an-id', ada.token, { decision: 'approve' })).toMatchObject({ status: 404 });
    expect(await api('POST', '/api/ai/approval/0123456789abcdef01234567', ada.token, {})).toMatchObject({ status: 400 });
  });
});
