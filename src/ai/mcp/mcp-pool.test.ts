// The MCP client pool against real MCP servers on loopback (the SDK's own server classes): both
// transports, the credential, one client reused, a timeout, a server that dropped and came back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import { createGuardedFetch } from '../../platform/net/guarded-fetch.js';
import { createOutboundPolicy } from '../../platform/net/outbound-guard.js';
import { createMcpPool, McpRequestError, type McpEndpoint, type McpTransport } from './mcp-pool.js';

const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }));
const pool = createMcpPool({ fetch: guarded, timeoutMs: 1_500 });
afterAll(async () => {
  await pool.closeAll();
  guarded.close();
});

const endpoint = (server: TestMcpServer, transport: McpTransport, headers: Record<string, string>, id = `${transport}-${server.port}`): McpEndpoint => ({
  id,
  version: 'v1',
  url: server.url,
  transport,
  headers,
});

describe.each(['streamable-http', 'sse'] as const)('over %s', (transport) => {
  let server: TestMcpServer;
  beforeAll(async () => {
    server = await startMcpServer({ transport, credential: 'tok-123' });
  });
  afterAll(() => server.close());

  it('lists the tools and calls one with the credential', async () => {
    const at = endpoint(server, transport, { Authorization: 'Bearer tok-123' });
    const tools = await pool.listTools(at);
    expect(tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'fail', 'slow']);
    expect(tools.find((tool) => tool.name === 'add')).toMatchObject({ description: 'Adds two numbers', inputSchema: { type: 'object', required: ['a', 'b'] } });
    const result = await pool.callTool(at, 'add', { a: 2, b: 3 });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    expect(server.calls('add')).toBe(1);
    const failed = await pool.callTool(at, 'fail', { message: 'no luck' });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'no luck' }] });
  });

  it('is refused without the credential, and nothing runs', async () => {
    const before = server.calls('echo');
    const error = await pool.callTool(endpoint(server, transport, {}, `${transport}-anon`), 'echo', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpRequestError);
    expect(server.calls('echo')).toBe(before);
    expect(server.refused()).toBeGreaterThan(0);
  });

  it('times out a slow call', async () => {
    const at = endpoint(server, transport, { Authorization: 'Bearer tok-123' });
    const started = Date.now();
    const error = await pool.callTool(at, 'slow', { ms: 10_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'timeout', message: 'The tool slow did not answer within 1500 ms' });
    expect(Date.now() - started).toBeLessThan(5_000);
    // The client is still good for the next call.
    expect((await pool.callTool(at, 'echo', { text: 'after' })).content).toEqual([{ type: 'text', text: 'after' }]);
  });

  it('stops waiting when the caller cancels', async () => {
    const controller = new AbortController();
    const call = pool.callTool(endpoint(server, transport, { Authorization: 'Bearer tok-123' }), 'slow', { ms: 10_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('turn cancelled')), 100);
    await expect(call).rejects.toThrow('turn cancelled');
  });
});

it('reconnects to a server that dropped and came back on the same URL', async () => {
  for (const transport of ['streamable-http', 'sse'] as const) {
    const first = await startMcpServer({ transport, credential: 'c' });
    const at = endpoint(first, transport, { Authorization: 'Bearer c' }, `comeback-${transport}`);
    expect((await pool.callTool(at, 'echo', { text: 'one' })).content).toEqual([{ type: 'text', text: 'one' }]);
    await first.close();
    await expect(pool.callTool(at, 'echo', { text: 'gone' })).rejects.toMatchObject({ kind: 'unreachable' });
    const second = await startMcpServer({ transport, credential: 'c', port: first.port });
    expect((await pool.callTool(at, 'echo', { text: 'two' })).content).toEqual([{ type: 'text', text: 'two' }]);
    expect(second.calls('echo')).toBe(1);
    await second.close();
  }
});

it('replaces the client when the endpoint changes version, and refuses a URL the guard refuses', async () => {
  const server = await startMcpServer({ transport: 'streamable-http', credential: 'new' });
  const at = { ...endpoint(server, 'streamable-http', { Authorization: 'Bearer old' }, 'versioned'), version: 'a' };
  await expect(pool.callTool(at, 'echo', { text: 'x' })).rejects.toMatchObject({ kind: 'refused' });
  const changed = { ...at, version: 'b', headers: { Authorization: 'Bearer new' } };
  expect((await pool.callTool(changed, 'echo', { text: 'y' })).content).toEqual([{ type: 'text', text: 'y' }]);
  expect(pool.versionOf('versioned')).toBe('b');
  await pool.close('versioned');
  expect(pool.versionOf('versioned')).toBeUndefined();
  const refused = { ...changed, id: 'metadata', url: 'http://169.254.169.254/mcp' };
  await expect(pool.listTools(refused)).rejects.toMatchObject({ code: 'URL_NOT_ALLOWED' });
  await server.close();
});
