// Voice-agent mode through the HTTP routes, with a real MCP server on loopback (the SDK's classes,
// counting its calls) and the person's approval cards: the signature (good, wrong, expired, replayed),
// each way a held request ends (approve, decline, no decision in time, the call ended), and calls
// that are refused (another twin's agent, tool or person; a disabled tool; a call already ended; no
// secret configured).
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import { until } from '../../../test/support/until.js';
import { toolApprovals } from '../approvals/approvals.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { parseSignature, signatureHeader, signatureMatches } from './voice-agent.signature.js';

const SECRET = randomBytes(32).toString('hex');
let t: TestApp;
let approving: TestMcpServer;
let open: TestMcpServer;
let other: TestMcpServer;
let twin: TwinRow;
let otherTwin: TwinRow;
/** Tool keys: echo behind approval, add without, and the other twin's echo. */
const keys = { echo: '', add: '', otherEcho: '' };
let ada: { id: string; token: string };
let stranger: { id: string };

async function api(method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: object) {
  const response = await t.app.inject({ method, url, payload, headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

/** Adds a connector to the admin's twin; answers the key of that connector's `tool`. */
async function connector(admin: string, name: string, server: TestMcpServer, requireApproval: boolean, tool: string): Promise<string> {
  const created = await api('POST', '/api/admin/mcp-server', admin, { name, url: server.url, credential: 'va-secret', requireApproval });
  expect(created.status).toBe(201);
  const tools = (await api('GET', '/api/admin/tools', admin)).body.data as Array<{ name: string; tool: string; server: { name: string } | null }>;
  return tools.find((entry) => entry.server?.name === name && entry.tool === tool)!.name;
}

/** A signed call as the voice agent sends it; `sign` overrides the header (or drops it with null). */
function agentCall(route: 'tool' | 'ended', body: object, sign?: string | null, app: TestApp = t) {
  const raw = JSON.stringify(body);
  const header = sign === undefined ? signatureHeader(SECRET, raw) : sign;
  return app.app.inject({
    method: 'POST',
    url: `/api/ai/rt/voice-agent/${route}`,
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'x-twin-signature': header }) },
    payload: raw,
  });
}

let calls = 0;
const toolCall = (overrides: Record<string, unknown> = {}) => ({
  voiceAgentId: 'agent-alpha',
  callId: `call-${++calls}`,
  userId: ada.id,
  tool: keys.echo,
  arguments: { text: 'book the room' },
  ...overrides,
});

/** The person's card for this call, once it waits. */
async function waitingCard(): Promise<Record<string, unknown>> {
  let cards: Array<Record<string, unknown>> = [];
  await until(async () => {
    cards = (await api('GET', '/api/user/approvals', ada.token)).body.approvals as Array<Record<string, unknown>>;
    return cards.length === 1;
  });
  return cards[0]!;
}

beforeAll(async () => {
  [approving, open, other] = await Promise.all(
    [0, 1, 2].map(() => startMcpServer({ transport: 'streamable-http', credential: 'va-secret' })),
  );
  t = await startTestApp({ env: { VOICE_AGENT_SECRET: SECRET, CONNECTOR_ALLOWED_HOSTS: '127.0.0.1', APPROVAL_TIMEOUT_MS: '1500' } });
  const db = t.platform.database.db;
  twin = await buildTwin(db, { voiceAgentId: 'agent-alpha' });
  otherTwin = await buildTwin(db, { voiceAgentId: 'agent-beta' });
  const admin = await signIn(t.app, (await buildUser(db, { twin, role: 'admin' })).user.email);
  keys.echo = await connector(admin, 'Calendar', approving, true, 'echo');
  keys.add = await connector(admin, 'Maths', open, false, 'add');
  const otherAdmin = await signIn(t.app, (await buildUser(db, { twin: otherTwin, role: 'admin' })).user.email);
  keys.otherEcho = await connector(otherAdmin, 'Elsewhere', other, false, 'echo');
  const person = await buildUser(db, { twin });
  ada = { id: person.user.id, token: await signIn(t.app, person.user.email) };
  stranger = { id: (await buildUser(db, { twin: otherTwin })).user.id };
}, 60_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([approving, open, other].map((server) => server?.close()));
});

describe('the signature', () => {
  it('runs a tool that needs no approval for a good signature, at once', async () => {
    const response = await agentCall('tool', toolCall({ tool: keys.add, arguments: { a: 2, b: 3 } }));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, result: '5' });
    expect(open.calls('add')).toBe(1);
  });

  it('refuses a wrong, missing or malformed signature, or one over another body, with 401 BAD_SIGNATURE', async () => {
    const body = toolCall({ tool: keys.add, arguments: { a: 1, b: 1 } });
    const wrong = signatureHeader(randomBytes(32).toString('hex'), JSON.stringify(body));
    const otherBody = signatureHeader(SECRET, JSON.stringify({ ...body, arguments: { a: 9, b: 9 } }));
    for (const header of [wrong, otherBody, null, 'v1=abc', `t=${Math.floor(Date.now() / 1000)}`]) {
      const response = await agentCall('tool', body, header);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ success: false, code: 'BAD_SIGNATURE' });
    }
    expect(open.calls('add')).toBe(1);
  });

  it('holds a signature good to exactly 5 minutes either way of its time, to the second', () => {
    const raw = JSON.stringify(toolCall({ tool: keys.add, arguments: { a: 1, b: 2 } }));
    const signedAt = 1_800_000_000;
    const parts = parseSignature(signatureHeader(SECRET, raw, signedAt))!;
    for (const now of [signedAt - 300, signedAt, signedAt + 300]) expect(signatureMatches(SECRET, parts, raw, now)).toBe(true);
    for (const now of [signedAt - 301, signedAt + 301]) expect(signatureMatches(SECRET, parts, raw, now)).toBe(false);
  });

  it('refuses a signature older than 5 minutes (or as far ahead)', async () => {
    const body = toolCall({ tool: keys.add, arguments: { a: 1, b: 2 } });
    const now = Math.floor(Date.now() / 1000);
    // The exact second is the test above's; here the route's clock runs on while the call is made, so
    // the time ahead keeps a margin (a busy machine has taken over a second to answer).
    for (const time of [now - 301, now + 330]) {
      const response = await agentCall('tool', body, signatureHeader(SECRET, JSON.stringify(body), time));
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ success: false, code: 'BAD_SIGNATURE' });
    }
    expect(open.calls('add')).toBe(1);
    // Four minutes old is still good.
    expect((await agentCall('tool', body, signatureHeader(SECRET, JSON.stringify(body), now - 240))).json()).toEqual({ success: true, result: '3' });
    expect(open.calls('add')).toBe(2);
  });

  it('refuses a signature used before, even on the ended route', async () => {
    const body = toolCall({ tool: keys.add, arguments: { a: 4, b: 4 } });
    const header = signatureHeader(SECRET, JSON.stringify(body));
    expect((await agentCall('tool', body, header)).json()).toEqual({ success: true, result: '8' });
    const again = await agentCall('tool', body, header);
    expect(again.statusCode).toBe(401);
    expect(again.json()).toMatchObject({ success: false, code: 'BAD_SIGNATURE' });
    expect(open.calls('add')).toBe(3);
    const ended = { voiceAgentId: 'agent-alpha', callId: 'call-replayed' };
    const endedHeader = signatureHeader(SECRET, JSON.stringify(ended));
    expect((await agentCall('ended', ended, endedHeader)).statusCode).toBe(200);
    expect((await agentCall('ended', ended, endedHeader)).statusCode).toBe(401);
  });

  it('answers 400 for a signed body that is not a tool request', async () => {
    const response = await agentCall('tool', { voiceAgentId: 'agent-alpha', tool: keys.add });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false });
  });
});

describe('a call that needs the person’s approval', () => {
  it('holds the request until the person approves, then runs the tool', async () => {
    const pending = agentCall('tool', toolCall());
    const card = await waitingCard();
    expect(card).toMatchObject({ server: 'Calendar', tool: 'echo', arguments: { text: 'book the room' } });
    expect(approving.calls('echo')).toBe(0);
    expect((await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' })).status).toBe(200);
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, result: 'book the room' });
    expect(approving.calls('echo')).toBe(1);
  });

  it('answers DECLINED when the person denies, and the tool does not run', async () => {
    const pending = agentCall('tool', toolCall());
    const card = await waitingCard();
    expect((await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'deny' })).status).toBe(200);
    const response = await pending;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: false, code: 'DECLINED' });
    expect(approving.calls('echo')).toBe(1);
  });

  it('answers EXPIRED when nobody decides in time (the shorter of APPROVAL_TIMEOUT_MS and 45 s)', async () => {
    const started = Date.now();
    const response = await agentCall('tool', toolCall());
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(response.json()).toMatchObject({ success: false, code: 'EXPIRED' });
    expect(approving.calls('echo')).toBe(1);
    expect((await api('GET', '/api/user/approvals', ada.token)).body.approvals).toEqual([]);
  });

  it('answers CANCELLED when the call ends; the card ends and a late decision is refused', async () => {
    const request = toolCall();
    const pending = agentCall('tool', request);
    const card = await waitingCard();
    const ended = await agentCall('ended', { voiceAgentId: 'agent-alpha', callId: request.callId });
    expect(ended.statusCode).toBe(200);
    expect(ended.json()).toEqual({ success: true });
    expect((await pending).json()).toMatchObject({ success: false, code: 'CANCELLED' });
    expect((await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve' })).status).toBe(409);
    expect(approving.calls('echo')).toBe(1);
  });

  it('cancels the card when the voice agent drops the request', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const raw = JSON.stringify(toolCall());
    const dropped = new AbortController();
    const pending = fetch(`${base}/api/ai/rt/voice-agent/tool`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-twin-signature': signatureHeader(SECRET, raw) },
      body: raw,
      signal: dropped.signal,
    }).catch((error: unknown) => error);
    const card = await waitingCard();
    dropped.abort();
    await pending;
    const decisionOf = async () => (await t.platform.database.db.select().from(toolApprovals).where(eq(toolApprovals.id, card.approvalId as string)))[0]?.decision;
    await until(async () => (await decisionOf()) !== null, 1_000);
    expect(await decisionOf()).toBe('cancelled');
    expect(approving.calls('echo')).toBe(1);
  });

  it('approve_conversation covers the rest of the same call only', async () => {
    const first = toolCall();
    const pending = agentCall('tool', first);
    const card = await waitingCard();
    await api('POST', `/api/ai/approval/${card.approvalId}`, ada.token, { decision: 'approve_conversation' });
    expect((await pending).json()).toEqual({ success: true, result: 'book the room' });
    expect((await agentCall('tool', { ...first, arguments: { text: 'again' } })).json()).toEqual({ success: true, result: 'again' });
    expect(approving.calls('echo')).toBe(3);
    const nextCall = agentCall('tool', toolCall());
    const fresh = await waitingCard();
    await api('POST', `/api/ai/approval/${fresh.approvalId}`, ada.token, { decision: 'deny' });
    expect((await nextCall).json()).toMatchObject({ success: false, code: 'DECLINED' });
  });
});

describe('calls refused', () => {
  it('answers 404 for a voice agent no twin uses', async () => {
    const response = await agentCall('tool', toolCall({ voiceAgentId: 'agent-nobody' }));
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, code: 'VOICE_AGENT_NOT_FOUND' });
    expect((await agentCall('ended', { voiceAgentId: 'agent-nobody', callId: 'x' })).statusCode).toBe(404);
  });

  it("answers 404 for a person of another twin, or another twin's tool", async () => {
    const person = await agentCall('tool', toolCall({ userId: stranger.id }));
    expect(person.statusCode).toBe(404);
    expect(person.json()).toMatchObject({ success: false, code: 'USER_NOT_FOUND' });
    // The other twin's agent may not act for this twin's person either.
    const crossed = await agentCall('tool', toolCall({ voiceAgentId: 'agent-beta', tool: keys.otherEcho }));
    expect(crossed.statusCode).toBe(404);
    expect(crossed.json()).toMatchObject({ code: 'USER_NOT_FOUND' });
    const tool = await agentCall('tool', toolCall({ tool: keys.otherEcho }));
    expect(tool.statusCode).toBe(404);
    expect(tool.json()).toMatchObject({ success: false, code: 'TOOL_NOT_FOUND' });
    expect(other.calls('echo')).toBe(0);
  });

  it('answers 409 CALL_ENDED for a tool request after /ended named its call: no card, the tool does not run; another call goes on', async () => {
    const request = toolCall({ tool: keys.add, arguments: { a: 1, b: 1 } });
    expect((await agentCall('ended', { voiceAgentId: 'agent-alpha', callId: request.callId })).statusCode).toBe(200);
    const before = { add: open.calls('add'), echo: approving.calls('echo') };
    const late = await agentCall('tool', request);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toEqual({ success: false, code: 'CALL_ENDED', message: 'This call has ended; the tool did not run' });
    const lateApproval = await agentCall('tool', { ...toolCall(), callId: request.callId });
    expect(lateApproval.json()).toMatchObject({ code: 'CALL_ENDED' });
    expect((await api('GET', '/api/user/approvals', ada.token)).body.approvals).toEqual([]);
    expect({ add: open.calls('add'), echo: approving.calls('echo') }).toEqual(before);
    // The same call id of another twin's agent is another call.
    const elsewhere = await agentCall('tool', toolCall({ voiceAgentId: 'agent-beta', callId: request.callId, userId: stranger.id, tool: keys.otherEcho }));
    expect(elsewhere.json()).toMatchObject({ success: true });
  });

  it("answers 404 TOOL_NOT_FOUND for a tool in the twin's toolsDisabled", async () => {
    const db = t.platform.database.db;
    const superToken = await signIn(t.app, (await buildUser(db, { twin, accountType: 'super' })).user.email);
    expect((await api('PUT', `/api/admin/institution/${twin.id}`, superToken, { toolsDisabled: [keys.add] })).status).toBe(200);
    const response = await agentCall('tool', toolCall({ tool: keys.add, arguments: { a: 1, b: 1 } }));
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(open.calls('add')).toBe(3);
  });

  it('answers 503 VOICE_AGENT_NOT_CONFIGURED without VOICE_AGENT_SECRET', async () => {
    const bare = await startTestApp();
    try {
      const response = await agentCall('tool', toolCall(), undefined, bare);
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ success: false, code: 'VOICE_AGENT_NOT_CONFIGURED' });
    } finally {
      await bare.close();
    }
  });
});
