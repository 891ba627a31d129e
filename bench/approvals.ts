// bench/approvals: what an approval costs, on the service as a deployment runs it
// (bench/support/service-process.ts). One person with two Socket.IO tabs asks over SSE (the third tab);
// the model calls a connector tool that requires approval; once every tab shows the card the bench
// sends the decision and times, from the moment the decision POST leaves:
//   call    until the MCP server's tool starts running (the server is in this process: one clock)
//   tabs    until the last tab (two sockets and the SSE stream) has TOOL_APPROVAL_DECIDED
// beside a direct call of the same tool by the MCP SDK's client (send → the tool starts). Added = call
// minus direct. Target: added p99 ≤ 20 ms, over BENCH_APPROVALS (200) approvals. Then BENCH_TURNS (20)
// turns whose model calls 3 tools of a connector without approval: the service's time per call (its
// record's durationMs: call sent → result) beside the direct client's round trip of the same tool.
//   npm run bench:approvals                                        (embedded shape, one process)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:approvals   (two API processes)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeModelServer } from '../test/support/fake-model-server.js';
import { startMcpServer } from '../test/support/mcp-server.js';
import { connectSocket, register } from '../test/support/socket-client.js';
import { readSse } from '../test/support/sse-client.js';
import { createPeople, signIn } from './support/people.js';
import { ADMIN, startService } from './support/service-process.js';

const APPROVALS = Number(process.env.BENCH_APPROVALS ?? 200);
const TURNS = Number(process.env.BENCH_TURNS ?? 20);
const now = () => performance.now();

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
const figures = (values: number[]) => `p50 ${quantile(values, 0.5).toFixed(2)} ms, p99 ${quantile(values, 0.99).toFixed(2)} ms`;

async function main(): Promise<void> {
  const model = await startFakeModelServer();
  const callStarts: number[] = [];
  const mcp = await startMcpServer({ transport: 'streamable-http', credential: 'bench-secret', onCall: () => callStarts.push(now()) });
  process.env.CONNECTOR_ALLOWED_HOSTS = '127.0.0.1';
  const service = await startService({ modelUrl: model.url });
  try {
    const base = service.url;
    const admin = await signIn(base, ADMIN.email, ADMIN.password);
    const json = (method: string, path: string, token: string, body?: unknown) =>
      fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const [name, requireApproval] of [['Approved', true], ['Direct', false]] as const) {
      const created = await json('POST', '/api/admin/mcp-server', admin, { name, url: mcp.url, credential: 'bench-secret', requireApproval });
      if (created.status !== 201) throw new Error(`connector not created: ${created.status} ${await created.text()}`);
    }
    const tools = ((await (await json('GET', '/api/admin/tools', admin)).json()) as { data: Array<{ name: string; tool: string; server: { name: string } | null }> }).data;
    const key = (server: string, tool: string) => tools.find((entry) => entry.server?.name === server && entry.tool === tool)!.name;
    const [person] = await createPeople(base, 1);

    // The baseline: the same tool called directly by the SDK's client.
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { requestInit: { headers: { authorization: 'Bearer bench-secret' } } }));
    const direct: number[] = [];
    const roundTrips: number[] = [];
    for (let i = 0; i < APPROVALS; i++) {
      callStarts.length = 0;
      const sent = now();
      await client.callTool({ name: 'echo', arguments: { text: `direct ${i}` } });
      roundTrips.push(now() - sent);
      direct.push(callStarts[0] - sent);
    }

    const tabs = await Promise.all([0, 1].map(async () => {
      const socket = await connectSocket(base, { auth: { token: person.token } });
      await register(socket, person.userId);
      const cards = new Set<string>();
      const decided = new Map<string, number>();
      socket.on('TOOL_APPROVAL', (card: { approvalId: string }) => cards.add(card.approvalId));
      socket.on('TOOL_APPROVAL_DECIDED', (event: { approvalId: string }) => decided.set(event.approvalId, now()));
      return { socket, cards, decided };
    }));

    const toCall: number[] = [];
    const toTabs: number[] = [];
    const approvedEcho = key('Approved', 'echo');
    for (let i = 0; i < APPROVALS; i++) {
      model.enqueue({ toolCalls: [{ id: `call_${i}`, name: approvedEcho, arguments: { text: `approval ${i}` } }] });
      model.enqueue({ chunks: ['ok'] });
      const reader = readSse(await json('POST', '/api/ai/personal-stream/qanda-stream', person.token, { inputs: [`Echo ${i}`] }));
      let card: { approvalId: string } | undefined;
      while (!card) {
        const frame = await reader.next();
        if (!frame) throw new Error('the stream ended without an approval card');
        if (frame.type === 'approval') card = frame as unknown as { approvalId: string };
      }
      const id = card.approvalId;
      while (!tabs.every((tab) => tab.cards.has(id))) await new Promise((resolve) => setTimeout(resolve, 1));
      callStarts.length = 0;
      const sent = now();
      const decision = await json('POST', `/api/ai/approval/${id}`, person.token, { decision: 'approve' });
      if (decision.status !== 200) throw new Error(`decision answered ${decision.status}: ${await decision.text()}`);
      let sseDecided = NaN;
      for (let frame = await reader.next(); frame; frame = await reader.next()) if (frame.type === 'approval_decided') sseDecided ||= now();
      while (!tabs.every((tab) => tab.decided.has(id))) await new Promise((resolve) => setTimeout(resolve, 1));
      toCall.push(callStarts[0] - sent);
      toTabs.push(Math.max(sseDecided, ...tabs.map((tab) => tab.decided.get(id)!)) - sent);
    }

    const serviceCalls: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      model.enqueue({
        toolCalls: [
          { id: `t${i}_1`, name: key('Direct', 'echo'), arguments: { text: 'one' } },
          { id: `t${i}_2`, name: key('Direct', 'add'), arguments: { a: 1, b: 2 } },
          { id: `t${i}_3`, name: key('Direct', 'echo'), arguments: { text: 'three' } },
        ],
      });
      model.enqueue({ chunks: ['done'] });
      const frames = await readSse(await json('POST', '/api/ai/personal-stream/qanda-stream', person.token, { inputs: [`Three calls ${i}`] })).rest();
      const historyId = frames.find((frame) => frame.type === 'complete')!.historyId as string;
      const record = (await (await json('GET', `/api/user/history/${historyId}`, person.token)).json()) as { data: { toolCalls: Array<{ durationMs: number }> } };
      serviceCalls.push(...record.data.toolCalls.map((call) => call.durationMs));
    }

    console.log(`approvals bench: ${service.shape}, ${APPROVALS} approvals, 2 socket tabs + the SSE stream`);
    console.log(`  direct call (SDK client send → tool runs):      ${figures(direct)}`);
    console.log(`  decision POST → tool runs on the connector:     ${figures(toCall)}`);
    console.log(`  added over a direct call:                       p50 ${(quantile(toCall, 0.5) - quantile(direct, 0.5)).toFixed(2)} ms, p99 ${(quantile(toCall, 0.99) - quantile(direct, 0.99)).toFixed(2)} ms (target p99 ≤ 20 ms)`);
    console.log(`  decision POST → TOOL_APPROVAL_DECIDED, last tab: ${figures(toTabs)}`);
    console.log(`  ${TURNS} turns × 3 calls without approval: service time per call ${figures(serviceCalls)}; direct round trip ${figures(roundTrips)}`);
    for (const tab of tabs) tab.socket.close();
    await client.close();
  } finally {
    await service.stop();
    await mcp.close();
    await model.close();
  }
}

await main();
