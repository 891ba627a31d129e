// Voice-agent calls in the scaled shape: two real API processes on one PostgreSQL database and one
// Redis. A signature used on process A is refused on process B; a tool request held on A for the
// person's decision is cancelled by the call's end sent to B, and its tool does not run.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../src/modules/voice-agent/voice-agent.signature.js';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildTwin, buildUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { startMcpServer, type TestMcpServer } from './support/mcp-server.js';
import { scaledEnv, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { until } from './support/until.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const SECRET = randomBytes(32).toString('hex');

describe.runIf(enabled)('voice-agent calls across processes', () => {
  let database: TestDatabase;
  let model: FakeModelServer;
  let mcp: TestMcpServer;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let echoKey: string;
  let personId: string;
  let personToken: string;

  const agentCall = (process: ServiceProcess, route: 'tool' | 'ended', raw: string, header = signatureHeader(SECRET, raw)) =>
    fetch(`${process.url}/api/ai/rt/voice-agent/${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-twin-signature': header }, body: raw });

  beforeAll(async () => {
    [database, model, mcp] = await Promise.all([openTestDatabase(), startFakeModelServer(), startMcpServer({ transport: 'streamable-http', credential: 'vm-secret' })]);
    const env = { ...scaledEnv(database.url!, model.url), CONNECTOR_ALLOWED_HOSTS: '127.0.0.1', VOICE_AGENT_SECRET: SECRET, APPROVAL_TIMEOUT_MS: '20000' };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
    const twin = await buildTwin(database.db, { voiceAgentId: 'desk-agent' });
    const admin = await buildUser(database.db, { twin, role: 'admin' });
    const person = await buildUser(database.db, { twin });
    personId = person.user.id;
    personToken = await signInAt(a.url, person.user.email, person.password);
    const adminToken = await signInAt(a.url, admin.user.email, admin.password);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` };
    const created = await fetch(`${a.url}/api/admin/mcp-server`, { method: 'POST', headers, body: JSON.stringify({ name: 'Desk', url: mcp.url, credential: 'vm-secret', requireApproval: true }) });
    expect(created.status).toBe(201);
    const tools = (await (await fetch(`${a.url}/api/admin/tools`, { headers })).json()) as { data: Array<{ name: string; tool: string }> };
    echoKey = tools.data.find((tool) => tool.tool === 'echo')!.name;
  }, 90_000);

  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await Promise.all([model?.close(), mcp?.close()]);
    await database?.close();
  });

  it('refuses on B a signature already used on A', async () => {
    const raw = JSON.stringify({ voiceAgentId: 'desk-agent', callId: 'replayed-call' });
    const header = signatureHeader(SECRET, raw);
    expect((await agentCall(a, 'ended', raw, header)).status).toBe(200);
    const replayed = await agentCall(b, 'ended', raw, header);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({ success: false, code: 'BAD_SIGNATURE' });
  });

  it('cancels on A the request waiting for a decision when the call ends on B', async () => {
    const raw = JSON.stringify({ voiceAgentId: 'desk-agent', callId: 'call-across', userId: personId, tool: echoKey, arguments: { text: 'hold on' } });
    const started = Date.now();
    const pending = agentCall(a, 'tool', raw);
    await until(async () => {
      const listed = (await (await fetch(`${b.url}/api/user/approvals`, { headers: { authorization: `Bearer ${personToken}` } })).json()) as { approvals: unknown[] };
      return listed.approvals.length === 1;
    }, 10_000);
    expect((await agentCall(b, 'ended', JSON.stringify({ voiceAgentId: 'desk-agent', callId: 'call-across' }))).status).toBe(200);
    const answer = await pending;
    expect(await answer.json()).toMatchObject({ success: false, code: 'CANCELLED' });
    expect(Date.now() - started).toBeLessThan(15_000); // well before the 20-second wait ran out
    expect(mcp.calls('echo')).toBe(0);
  });
});
