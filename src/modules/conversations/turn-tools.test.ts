// Which tools a turn offers (the twin's toolsDisabled, the assistant's mode and tools list, the built-in
// local model), TOOL_STATUS and the approval card on a Socket.IO turn, and a delegated subagent whose
// declined call is a failed step, on its record and in the subagent efficiency chart. The fake model
// server and a real MCP server on loopback.
import { eq } from 'drizzle-orm';
import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAssistant } from '../../../test/support/assistants.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { askQanda } from '../../../test/support/http.js';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import { collect, connectSocket, register } from '../../../test/support/socket-client.js';
import { readSse, type SseReader } from '../../../test/support/sse-client.js';
import { until } from '../../../test/support/until.js';
import { changesHeard } from '../../../test/support/changes.js';
import { uploadAndIngest } from '../../../test/support/files.js';
import { TOOL_RESULT_TEXT } from './turn-tools.js';
import { history } from '../history/history.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { updateTwin } from '../twins/twins.repo.js';
import { unnumbered } from '../../../test/support/frames.js';

let t: TestApp;
let model: FakeModelServer;
let mcp: TestMcpServer;
let base: string;
let twin: TwinRow;
let adminToken: string;
let keys: Record<string, string>;
const sockets: Socket[] = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'tools-secret' });
  t = await startTestApp({ workers: true, env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', CONNECTOR_ALLOWED_HOSTS: '127.0.0.1' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  twin = await buildTwin(db());
  adminToken = await signIn(t.app, (await buildUser(db(), { twin, role: 'admin' })).user.email);
  const created = await api('POST', '/api/admin/mcp-server', adminToken, { name: 'Desk', url: mcp.url, credential: 'tools-secret', requireApproval: true });
  expect(created.status).toBe(201);
  const listed = (await api('GET', '/api/admin/tools', adminToken)).body.data as Array<{ name: string; tool: string }>;
  keys = Object.fromEntries(listed.map((tool) => [tool.tool, tool.name]));
});
afterAll(async () => {
  for (const socket of sockets) socket.close();
  await t?.close();
  await mcp?.close();
  await model?.close();
});

const db = () => t.platform.database.db;

async function api(method: string, url: string, token: string, payload?: object) {
  const response = await t.app.inject({ method: method as 'GET', url, payload, headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

async function member() {
  const built = await buildUser(db(), { twin });
  return { id: built.user.id, token: await signIn(t.app, built.user.email) };
}

async function askSse(token: string, question: string, requestArgs: Record<string, unknown> = {}): Promise<SseReader> {
  const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs }),
  });
  return readSse(response);
}

/** Reads the stream until its approval card. */
async function cardOf(reader: SseReader): Promise<{ approvalId: string }> {
  for (let frame = await reader.next(); frame; frame = await reader.next()) {
    if (frame.type === 'approval') return frame as unknown as { approvalId: string };
  }
  throw new Error('no approval card');
}

const offered = (index = -1) => model.requests.at(index)!.tools.map((tool) => tool.function.name).sort();
const sharedAssistant = (overrides: Parameters<typeof buildAssistant>[1] = {}) => buildAssistant(db(), { twinId: twin.id, twinShared: true, ...overrides });

describe('the tools a turn offers', () => {
  it("offers the twin's connector tools, minus toolsDisabled; file_search and memory only when the assistant names them", async () => {
    const ada = await member();
    model.enqueue({ chunks: ['ok'] });
    await (await askSse(ada.token, 'Hi')).rest();
    expect(offered()).toEqual([keys.add, keys.echo, keys.fail, keys.slow].sort());

    for (const key of [keys.slow, keys.fail]) expect((await api('PUT', `/api/admin/tool/${key}`, adminToken, { enabled: false })).status).toBe(200);
    await changesHeard(t.app);
    try {
      model.enqueue({ chunks: ['ok'] });
      await (await askSse(ada.token, 'Hi again')).rest();
      expect(offered()).toEqual([keys.add, keys.echo].sort());

      const picky = await sharedAssistant({ tools: ['file_search', keys.echo, keys.slow] });
      model.enqueue({ chunks: ['ok'] });
      await (await askSse(ada.token, 'Only some', { assistant_id: picky.id })).rest();
      expect(offered()).toEqual(['file_search', keys.echo].sort());
    } finally {
      await updateTwin(db(), twin.id, { toolsDisabled: [] });
      await changesHeard(t.app);
    }
  });

  it("offers nothing with assistantToolMode none, and makes the model call one with required", async () => {
    const ada = await member();
    const quiet = await sharedAssistant({ assistantToolMode: 'none' });
    model.enqueue({ chunks: ['ok'] });
    await (await askSse(ada.token, 'Hi', { assistant_id: quiet.id })).rest();
    expect(model.requests.at(-1)!.tools).toEqual([]);

    const eager = await sharedAssistant({ assistantToolMode: 'required', tools: [keys.add] });
    model.enqueue({ toolCalls: [{ id: 'call_r1', name: keys.add, arguments: { a: 2, b: 3 } }] });
    model.enqueue({ chunks: ['Five.'] });
    const reader = await askSse(ada.token, 'Add', { assistant_id: eager.id });
    const card = await cardOf(reader);
    await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' });
    await reader.rest();
    expect(model.requests.at(-2)!.body.tool_choice).toBe('required');
    expect(model.requests.at(-1)!.body.tool_choice).not.toBe('required');
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain('"5"');
  });
});

describe('a Socket.IO turn', () => {
  it('sends TOOL_STATUS to its socket and the card to every tab; a decision from the other tab lets the call run', async () => {
    const ada = await member();
    const socket = await connectSocket(base, { auth: { token: ada.token } });
    const other = await connectSocket(base, { auth: { token: ada.token } });
    sockets.push(socket, other);
    expect((await register(socket, ada.id)).event).toBe('connect_success');
    expect((await register(other, ada.id)).event).toBe('connect_success');
    const statuses = collect<{ name: string; status: string }>(socket, 'TOOL_STATUS');
    const cards = collect<{ approvalId: string }>(other, 'TOOL_APPROVAL');
    model.enqueue({ toolCalls: [{ id: 'call_s1', name: keys.echo, arguments: { text: 'from a socket' } }] });
    model.enqueue({ chunks: ['Echoed.'] });
    const answer = askQanda(base, ada.token, { inputs: ['Echo from a socket'], requestArgs: { socketId: socket.id } });
    // The turn goes through the model server, the connector and the database, which the PostgreSQL run's two
    // workers share with the servers on two cores; a request that answers first failed, and says how.
    let early: unknown;
    void answer.then((response) => (early = response.body));
    await until(() => cards.length === 1 || early !== undefined, 10_000, () => ({ early, statuses }));
    expect(early).toBeUndefined();
    expect(statuses.map(unnumbered)).toEqual([{ name: keys.echo, status: 'awaiting_approval' }]);
    await api('POST', `/api/ai/approval/${cards[0].approvalId}`, ada.token, { decision: 'approve' });
    expect((await answer).body).toMatchObject({ success: true, answer: 'Echoed.' });
    expect(statuses.map(unnumbered)).toEqual([
      { name: keys.echo, status: 'awaiting_approval' },
      { name: keys.echo, status: 'started' },
      { name: keys.echo, status: 'completed' },
    ]);
  });
});

describe('delegated subagents', () => {
  it("runs the subagent's own tool loop; its declined call is a failed step on the record and in the chart", async () => {
    const ada = await member();
    const scheduler = await sharedAssistant({ name: 'Scheduler', instructions: 'You book meetings.', tools: [keys.echo] });
    const lead = await sharedAssistant({ name: 'Lead', instructions: 'You lead.', delegates: [scheduler.id] });
    model.enqueue({ toolCalls: [{ id: 'call_p1', name: 'delegate', arguments: { assistantId: scheduler.id, task: 'Book Tuesday' } }] });
    model.enqueue({ toolCalls: [{ id: 'call_sub1', name: keys.echo, arguments: { text: 'Tuesday' } }] });
    model.enqueue({ chunks: ['I could not book it.'] });
    model.enqueue({ chunks: ['The scheduler could not book Tuesday.'] });
    const before = mcp.calls('echo');
    const reader = await askSse(ada.token, 'Book me Tuesday', { assistant_id: lead.id });
    const frames: Array<Record<string, unknown>> = [];
    for (let frame = await reader.next(); frame && frame.type !== 'approval'; frame = await reader.next()) frames.push(frame);
    expect(frames.map(unnumbered)).toContainEqual({ type: 'tool', name: 'delegate', status: 'started' });
    const card = ((await api('GET', '/api/user/approvals', ada.token)).body.approvals as Array<{ approvalId: string; tool: string }>)[0];
    expect(card.tool).toBe('echo');
    await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'deny' });
    const rest = await reader.rest();
    const complete = rest.find((frame) => frame.type === 'complete')!;
    expect(complete.outputs).toEqual(['The scheduler could not book Tuesday.']);
    expect(mcp.calls('echo')).toBe(before);
    // The subagent ran on its own instructions and tools, with the task as its question.
    const subRequest = model.requests.find((request) => request.system.includes('You book meetings.'))!;
    expect(subRequest.messages.at(-1)).toMatchObject({ role: 'user', content: 'Book Tuesday' });
    expect(subRequest.tools.map((tool) => tool.function.name)).toEqual([keys.echo]);

    const [record] = await db().select().from(history).where(eq(history.id, complete.historyId as string));
    expect(record.subagents).toEqual([
      expect.objectContaining({ assistantId: scheduler.id, name: 'Scheduler', task: 'Book Tuesday', status: 'complete', steps: 2, failedSteps: 1 }),
    ]);
    expect(record.subagents[0].transcript).toContainEqual({ role: 'tool', content: `${keys.echo}: declined` });
    expect(record.toolCalls).toContainEqual(expect.objectContaining({ tool: 'echo', status: 'declined', approval: expect.objectContaining({ decision: 'deny' }) }));

    const chart = await api('POST', '/api/admin/histories/charts/subagent-efficiency', adminToken, { institution: twin.id });
    expect(chart.status).toBe(200);
    expect(chart.body.data).toEqual([
      expect.objectContaining({ assistantId: scheduler.id, name: 'Scheduler', runs: 1, steps: 2, failedSteps: 1, successRate: 0.5 }),
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(chart.body.series).toContainEqual({ date: today, runs: 1, steps: 2, failedSteps: 1 });
    // A plain member holds histories.list nowhere.
    expect((await api('POST', '/api/admin/histories/charts/subagent-efficiency', ada.token, {})).status).toBe(403);
  });
});

describe('the built-in tools', () => {
  it("file_search answers from the person's own files; memory saves what they ask, and nothing while Enable User Memory is off", async () => {
    const ada = await member();
    const helper = await sharedAssistant({ tools: ['file_search', 'memory'] });
    const file = await uploadAndIngest(t, ada.token, { filename: 'garden.txt', content: 'The greenhouse key hangs behind the blue door of the shed.', contentType: 'text/plain' });
    expect(file.status).toBe('ready');
    model.enqueue({ toolCalls: [{ id: 'call_f1', name: 'file_search', arguments: { query: 'greenhouse key' } }] });
    model.enqueue({ chunks: ['Behind the blue door.'] });
    const found = await (await askSse(ada.token, 'Where is the greenhouse key?', { assistant_id: helper.id })).rest();
    expect(found.map(unnumbered)).toContainEqual({ type: 'tool', name: 'file_search', status: 'completed' });
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain('behind the blue door of the shed');
    // Another person's search of the same words finds nothing of Ada's.
    const bob = await member();
    model.enqueue({ toolCalls: [{ id: 'call_f2', name: 'file_search', arguments: { query: 'greenhouse key' } }] });
    model.enqueue({ chunks: ['No idea.'] });
    await (await askSse(bob.token, 'Where is the greenhouse key?', { assistant_id: helper.id })).rest();
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain(TOOL_RESULT_TEXT.nothingFound);

    model.enqueue({ toolCalls: [{ id: 'call_m1', name: 'memory', arguments: { key: 'favourite tea', value: 'Earl Grey' } }] });
    model.enqueue({ chunks: ['Noted.'] });
    await (await askSse(ada.token, 'Remember that I like Earl Grey', { assistant_id: helper.id })).rest();
    const memoryOf = async () => (await api('GET', '/api/user/memory', ada.token)).body.data as Array<{ key_name: string; key_value: string }>;
    expect(await memoryOf()).toContainEqual(expect.objectContaining({ key_name: 'favourite tea', key_value: 'Earl Grey' }));

    expect((await api('PUT', '/api/user/setting', ada.token, { userMemoryEnabled: false })).status).toBe(200);
    model.enqueue({ toolCalls: [{ id: 'call_m2', name: 'memory', arguments: { key: 'favourite biscuit', value: 'shortbread' } }] });
    model.enqueue({ chunks: ['I cannot keep that.'] });
    const refused = await (await askSse(ada.token, 'Remember shortbread', { assistant_id: helper.id })).rest();
    expect(refused.map(unnumbered)).toContainEqual({ type: 'tool', name: 'memory', status: 'failed' });
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain(TOOL_RESULT_TEXT.memoryOff);
    expect((await memoryOf()).some((row) => row.key_name === 'favourite biscuit')).toBe(false);
  });
});
