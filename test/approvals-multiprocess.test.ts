// Approvals in the scaled shape: two real API processes on one PostgreSQL database and one Redis. A turn
// streams over SSE from process A; the person's socket tab is held by process B and receives the card;
// the decision is sent to B; the call runs on A at once (bus) and every tab hears the decision.
import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildTwin, buildUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { startMcpServer, type TestMcpServer } from './support/mcp-server.js';
import { collect, connectSocket, register } from './support/socket-client.js';
import { readSse } from './support/sse-client.js';
import { scaledEnv, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { until } from './support/until.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.runIf(enabled)('an approval decided on another process', () => {
  let database: TestDatabase;
  let model: FakeModelServer;
  let mcp: TestMcpServer;
  let a: ServiceProcess;
  let b: ServiceProcess;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    [database, model, mcp] = await Promise.all([openTestDatabase(), startFakeModelServer(), startMcpServer({ transport: 'streamable-http', credential: 'mp-secret' })]);
    const env = { ...scaledEnv(database.url!, model.url), CONNECTOR_ALLOWED_HOSTS: '127.0.0.1' };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
  }, 60_000);

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await Promise.all([model?.close(), mcp?.close()]);
    await database?.close();
  });

  it('runs the call on A right after the decision reaches B, and both tabs hear it', async () => {
    const twin = await buildTwin(database.db);
    const admin = await buildUser(database.db, { twin, role: 'admin' });
    const ada = await buildUser(database.db, { twin });
    const adminToken = await signInAt(a.url, admin.user.email, admin.password);
    const token = await signInAt(b.url, ada.user.email, ada.password);
    const headers = (bearer: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${bearer}` });
    const created = await fetch(`${a.url}/api/admin/mcp-server`, {
      method: 'POST',
      headers: headers(adminToken),
      body: JSON.stringify({ name: 'Shared desk', url: mcp.url, credential: 'mp-secret' }),
    });
    expect(created.status).toBe(201);
    const tools = (await (await fetch(`${b.url}/api/admin/tools`, { headers: headers(adminToken) })).json()) as { data: Array<{ name: string; tool: string }> };
    const echoKey = tools.data.find((tool) => tool.tool === 'echo')!.name;

    const socket = await connectSocket(b.url, { auth: { token } });
    sockets.push(socket);
    await register(socket, ada.user.id);
    const cards = collect<{ approvalId: string }>(socket, 'TOOL_APPROVAL');
    const decided = collect<{ decision: string }>(socket, 'TOOL_APPROVAL_DECIDED');

    model.enqueue({ toolCalls: [{ id: 'call_mp1', name: echoKey, arguments: { text: 'across processes' } }] });
    model.enqueue({ chunks: ['Done across processes.'] });
    const response = await fetch(`${a.url}/api/ai/personal-stream/qanda-stream`, { method: 'POST', headers: headers(token), body: JSON.stringify({ inputs: ['Echo it'] }) });
    const reader = readSse(response);
    let card: Record<string, unknown> | null = null;
    for (let frame = await reader.next(); frame; frame = await reader.next()) {
      if (frame.type === 'approval') {
        card = frame;
        break;
      }
    }
    expect(card).not.toBeNull();
    await until(() => cards.length === 1, 5_000);
    expect(cards[0].approvalId).toBe(card!.approvalId);
    expect(mcp.calls('echo')).toBe(0);

    const decision = await fetch(`${b.url}/api/ai/approval/${card!.approvalId as string}`, { method: 'POST', headers: headers(token), body: JSON.stringify({ decision: 'approve' }) });
    expect(await decision.json()).toEqual({ success: true, decision: 'approve' });
    const rest = await reader.rest();
    expect(rest).toContainEqual(expect.objectContaining({ type: 'approval_decided', approvalId: card!.approvalId, decision: 'approve' }));
    expect(rest.find((frame) => frame.type === 'complete')!.outputs).toEqual(['Done across processes.']);
    expect(mcp.calls('echo')).toBe(1);
    await until(() => decided.length === 1, 5_000);
    // A second decision on A is refused: the first one won.
    const again = await fetch(`${a.url}/api/ai/approval/${card!.approvalId as string}`, { method: 'POST', headers: headers(token), body: JSON.stringify({ decision: 'deny' }) });
    expect(again.status).toBe(409);
  }, 30_000);
});
