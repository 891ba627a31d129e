// This process's MCP clients (the official SDK's Client): one per server, opened on first use
// (Streamable HTTP, or SSE for older servers), through the guarded fetch the pool is given. A client
// whose server dropped it (a closed transport, a session the server no longer knows, a refused
// connection) is replaced and the request tried once more on the new one; a client whose endpoint
// changed (another version) is closed and replaced. Every request has a timeout. The SDK is loaded
// with the first client (~7 MB of heap a process that has no connector would hold otherwise).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import { OutboundRefusedError } from '../../platform/net/outbound-guard.js';

async function importSdk() {
  const [{ Client }, { SSEClientTransport }, { StreamableHTTPClientTransport }, { ErrorCode, McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Client, SSEClientTransport, StreamableHTTPClientTransport, ErrorCode, McpError };
}
let sdk: Awaited<ReturnType<typeof importSdk>> | undefined;
let loading: Promise<NonNullable<typeof sdk>> | undefined;
const loadSdk = () => (loading ??= importSdk().then((loaded) => (sdk = loaded)));

/** An error a server answered with (as the SDK raises it); none before the first client. */
export function isMcpError(error: unknown): error is McpError {
  return sdk !== undefined && error instanceof sdk.McpError;
}

export type McpTransport = 'streamable-http' | 'sse';

export interface McpEndpoint {
  /** The client kept for this id (a connector's id). */
  id: string;
  /** Changes whenever how to reach the server changes: a client of another version is replaced. */
  version: string;
  url: string;
  transport: McpTransport;
  /** Sent with every request (the credential). */
  headers: Record<string, string>;
}

export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

/** Why a request to a server failed: it did not answer in time, or it could not be reached. */
export class McpRequestError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'unreachable' | 'refused',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'McpRequestError';
  }
}

export interface McpPool {
  listTools(endpoint: McpEndpoint): Promise<McpToolInfo[]>;
  callTool(endpoint: McpEndpoint, tool: string, args: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<CallToolResult>;
  /** The version of the open client of this id, if any. */
  versionOf(id: string): string | undefined;
  close(id: string): Promise<void>;
  closeAll(): Promise<void>;
}

interface Entry {
  version: string;
  client: Promise<Client>;
}

export function createMcpPool(options: { fetch: FetchLike; timeoutMs: number; clientInfo?: { name: string; version: string } }): McpPool {
  const entries = new Map<string, Entry>();
  const clientInfo = options.clientInfo ?? { name: 'digital-twin', version: '1' };

  function open(endpoint: McpEndpoint): Entry {
    const requestInit = { headers: endpoint.headers };
    const url = new URL(endpoint.url);
    const connect = async ({ Client, SSEClientTransport, StreamableHTTPClientTransport }: NonNullable<typeof sdk>) => {
      const transport =
        endpoint.transport === 'sse'
          ? new SSEClientTransport(url, { fetch: options.fetch, requestInit })
          : new StreamableHTTPClientTransport(url, { fetch: options.fetch, requestInit });
      const client = new Client(clientInfo);
      // Dropped by the server or the network: the next request opens a new client.
      client.onclose = () => {
        if (entries.get(endpoint.id) === entry) entries.delete(endpoint.id);
      };
      try {
        await client.connect(transport, { timeout: options.timeoutMs });
        return client;
      } catch (error) {
        if (entries.get(endpoint.id) === entry) entries.delete(endpoint.id);
        await client.close().catch(() => {});
        throw error;
      }
    };
    const entry: Entry = { version: endpoint.version, client: loadSdk().then(connect) };
    entries.set(endpoint.id, entry);
    return entry;
  }

  function clientFor(endpoint: McpEndpoint): Promise<Client> {
    const entry = entries.get(endpoint.id);
    if (entry?.version === endpoint.version) return entry.client;
    if (entry) void closeEntry(endpoint.id, entry);
    return open(endpoint).client;
  }

  async function closeEntry(id: string, entry: Entry): Promise<void> {
    if (entries.get(id) === entry) entries.delete(id);
    const client = await entry.client.catch(() => undefined);
    await client?.close().catch(() => {});
  }

  /** Runs a request on the endpoint's client; a transport failure replaces the client and tries once more. */
  async function run<T>(endpoint: McpEndpoint, what: string, request: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const entry = entries.get(endpoint.id);
      try {
        return await request(await clientFor(endpoint));
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (isMcpError(error)) {
          if (error.code === sdk!.ErrorCode.RequestTimeout) throw new McpRequestError(`${what} did not answer within ${options.timeoutMs} ms`, 'timeout', { cause: error });
          throw error;
        }
        if (error instanceof OutboundRefusedError) throw error;
        const current = entries.get(endpoint.id);
        if (current && (current === entry || current.version === endpoint.version)) await closeEntry(endpoint.id, current);
        if (attempt === 0) continue;
        throw new McpRequestError(`${what} could not be reached: ${describe(error)}`, isUnauthorized(error) ? 'refused' : 'unreachable', { cause: error });
      }
    }
  }

  return {
    async listTools(endpoint) {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await run(endpoint, 'The server', (client) => client.listTools(cursor ? { cursor } : undefined, { timeout: options.timeoutMs }));
        for (const tool of page.tools) {
          tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as McpToolInfo['inputSchema'] });
        }
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1_000);
      return tools;
    },

    async callTool(endpoint, tool, args, callOptions = {}) {
      const { signal } = callOptions;
      const result = await run(
        endpoint,
        `The tool ${tool}`,
        (client) => client.callTool({ name: tool, arguments: args }, undefined, { timeout: options.timeoutMs, signal }),
        signal,
      );
      return result as CallToolResult;
    },

    versionOf: (id) => entries.get(id)?.version,

    async close(id) {
      const entry = entries.get(id);
      if (entry) await closeEntry(id, entry);
    },

    async closeAll() {
      await Promise.all([...entries].map(([id, entry]) => closeEntry(id, entry)));
    },
  };
}

function isUnauthorized(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === 401 || code === 403;
}

/** A short reason for a failed request, without URLs' secrets (the SDK's messages carry none). */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  if (isUnauthorized(error)) return 'the server refused the credential (HTTP 401/403)';
  return error instanceof Error ? error.message : String(error);
}
