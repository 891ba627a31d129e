// A real MCP server for tests, built with the SDK's own server classes on a loopback node:http server:
// Streamable HTTP (stateful sessions, as most servers run) or the older SSE transport. Its tools count
// their calls; every request must carry the credential (`Authorization: Bearer <credential>`, or the
// raw credential in `credentialHeader`), else 401 and nothing runs.
//   echo {text} → text          add {a, b} → the sum as text
//   slow {ms} → waits, then "slept <ms> ms" (for timeouts; stops early when the call is cancelled)
//   fail {message} → a tool error (isError) with that message
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export type McpTransportKind = 'streamable-http' | 'sse';

export interface McpServerOptions {
  transport: McpTransportKind;
  /** Required on every request when set. */
  credential?: string;
  /** Header carrying the raw credential; default `Authorization: Bearer <credential>`. */
  credentialHeader?: string;
  /** Listen on this port (to come back on the same URL after close()); default any free port. */
  port?: number;
  /** Told the moment a tool starts running (the approvals bench times decisions to it). */
  onCall?: (tool: string) => void;
}

export interface TestMcpServer {
  /** The URL a connector record names: `/mcp` (Streamable HTTP) or `/sse`. */
  url: string;
  port: number;
  /** How many times the tool ran. */
  calls(tool: string): number;
  /** Requests refused for a missing or wrong credential. */
  refused(): number;
  /** Stops listening and drops every connection and session. */
  close(): Promise<void>;
}

const TOOL_NAMES = ['echo', 'add', 'slow', 'fail'] as const;

function buildServer(count: (tool: string) => void): McpServer {
  const server = new McpServer({ name: 'test-mcp', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes the text back', inputSchema: { text: z.string() } }, async ({ text }) => {
    count('echo');
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
    count('add');
    return { content: [{ type: 'text', text: String(a + b) }] };
  });
  server.registerTool('slow', { description: 'Waits ms milliseconds', inputSchema: { ms: z.number().int().min(0) } }, async ({ ms }, extra) => {
    count('slow');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
  });
  server.registerTool('fail', { description: 'Always fails', inputSchema: { message: z.string() } }, async ({ message }) => {
    count('fail');
    return { content: [{ type: 'text', text: message }], isError: true };
  });
  return server;
}

export async function startMcpServer(options: McpServerOptions): Promise<TestMcpServer> {
  const counts = new Map<string, number>(TOOL_NAMES.map((name) => [name, 0]));
  const count = (tool: string) => {
    options.onCall?.(tool);
    counts.set(tool, (counts.get(tool) ?? 0) + 1);
  };
  let refusals = 0;
  const header = (options.credentialHeader ?? 'authorization').toLowerCase();
  const expected = options.credentialHeader ? options.credential : `Bearer ${options.credential}`;
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const sockets = new Set<Socket>();

  async function onStreamable(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = streamable.get(sessionId);
      if (transport) return transport.handleRequest(request, response);
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void streamable.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) streamable.delete(transport.sessionId);
    };
    await buildServer(count).connect(transport);
    await transport.handleRequest(request, response);
  }

  async function onSse(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    if (request.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', response);
      sse.set(transport.sessionId, transport);
      transport.onclose = () => sse.delete(transport.sessionId);
      await buildServer(count).connect(transport);
      return;
    }
    const transport = request.method === 'POST' && url.pathname === '/messages' ? sse.get(url.searchParams.get('sessionId') ?? '') : undefined;
    if (!transport) return void response.writeHead(404).end('Session not found');
    await transport.handlePostMessage(request, response);
  }

  const http = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (options.credential !== undefined && request.headers[header] !== expected) {
      refusals += 1;
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'missing or wrong credential' }));
      return;
    }
    const handled = options.transport === 'sse' ? onSse(request, response, url) : url.pathname === '/mcp' ? onStreamable(request, response) : undefined;
    if (!handled) return void response.writeHead(404).end();
    handled.catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => http.once('error', reject).listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}${options.transport === 'sse' ? '/sse' : '/mcp'}`,
    port,
    calls: (tool) => counts.get(tool) ?? 0,
    refused: () => refusals,
    async close() {
      for (const transport of [...streamable.values(), ...sse.values()]) await transport.close().catch(() => {});
      streamable.clear();
      sse.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
