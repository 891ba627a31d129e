// The ConnectorCatalog a turn uses (src/ai/tools/connector-catalog.ts), over this process's MCP client
// pool. A twin's active servers are read once and kept until a row change notice says a connector
// changed (any process); a notice for one server also closes this process's client of it when the
// server was deleted, deactivated or now connects differently.
import type { ConnectorCallResult, ConnectorCatalog, ConnectorTool } from '../../ai/tools/connector-catalog.js';
import { isMcpError, type McpPool } from '../../ai/mcp/mcp-pool.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { Executor } from '../../platform/db/client.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { endpointOf, endpointVersion } from './connector-endpoint.js';
import { findMcpServerById, listActiveServers } from './connectors.repo.js';
import type { McpServerRow } from './connectors.tables.js';
import { serverPrefixes, toolKey } from './tool-keys.js';

/** The text a model gets of one result, at most this long. */
const MAX_RESULT_TEXT = 100_000;
const CACHE_TTL_MS = 60_000;
const MAX_CACHED_TWINS = 10_000;

export interface ConnectorCatalogDeps {
  db: Executor;
  secrets: Pick<SecretBox, 'decrypt'>;
  pool: McpPool;
  /** Row change notices; without them nothing is cached. */
  changes?: Pick<ChangeFeed, 'subscribe' | 'caughtUp'>;
}

export interface ConnectorCatalogHandle extends ConnectorCatalog {
  /** Stops listening for changes and closes every client (app shutdown). */
  close(): Promise<void>;
}

export class ConnectorUnavailableError extends NotFoundError {
  constructor() {
    super('This connector is not available', 'CONNECTOR_UNAVAILABLE');
  }
}

/** The tools a twin's turns may offer from these servers (each server's allowedTools applied). */
export function toolsOfServers(servers: readonly McpServerRow[]): ConnectorTool[] {
  const prefixes = serverPrefixes(servers);
  return servers.flatMap((server) => {
    const allowed = server.allowedTools.length ? new Set(server.allowedTools) : undefined;
    return server.tools
      .filter((tool) => !allowed || allowed.has(tool.name))
      .map((tool) => ({
        key: toolKey(prefixes.get(server.id)!, tool.name),
        serverId: server.id,
        serverName: server.name,
        tool: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        requireApproval: server.requireApproval,
      }));
  });
}

function resultOf(result: Awaited<ReturnType<McpPool['callTool']>>): ConnectorCallResult {
  const parts = (result.content ?? []).map((item) => {
    if (item.type === 'text') return item.text;
    if (item.type === 'resource' && 'text' in item.resource) return item.resource.text;
    if (item.type === 'resource_link') return `[${item.name}](${item.uri})`;
    return `[${item.type}]`;
  });
  let text = parts.join('\n');
  if (!text && result.structuredContent) text = JSON.stringify(result.structuredContent);
  if (text.length > MAX_RESULT_TEXT) text = `${text.slice(0, MAX_RESULT_TEXT)}\n[truncated]`;
  return { text, isError: result.isError === true, raw: result.structuredContent ?? result.content ?? [] };
}

export function createConnectorCatalog(deps: ConnectorCatalogDeps): ConnectorCatalogHandle {
  const { db, secrets, pool, changes } = deps;
  const twins = new Map<string, { servers: McpServerRow[]; at: number }>();
  /** Bumped by every notice: a read a change overtook is not kept. */
  let generation = 0;

  async function recheck(id: string): Promise<void> {
    const open = pool.versionOf(id);
    if (open === undefined) return;
    const row = await findMcpServerById(db, id).catch(() => undefined);
    if (!row || row.status !== 'active' || endpointVersion(row) !== open) await pool.close(id);
  }

  const unsubscribe = changes?.subscribe(({ table, key }) => {
    if (table !== 'mcp_servers' && table !== '*') return;
    generation += 1;
    twins.clear();
    if (table === 'mcp_servers') void recheck(key);
  });

  async function activeServers(twinId: string): Promise<McpServerRow[]> {
    const cached = twins.get(twinId);
    if (cached && changes?.caughtUp && Date.now() - cached.at < CACHE_TTL_MS) return cached.servers;
    const seen = generation;
    const servers = await listActiveServers(db, twinId);
    if (changes && seen === generation) {
      if (twins.size >= MAX_CACHED_TWINS) twins.clear();
      twins.set(twinId, { servers, at: Date.now() });
    }
    return servers;
  }

  /** An active server of a cached twin list, while the lists are current. */
  function cachedServer(id: string): McpServerRow | undefined {
    if (!changes?.caughtUp) return undefined;
    for (const entry of twins.values()) {
      if (Date.now() - entry.at >= CACHE_TTL_MS) continue;
      const found = entry.servers.find((server) => server.id === id);
      if (found) return found;
    }
    return undefined;
  }

  return {
    async toolsFor(twinId) {
      return toolsOfServers(await activeServers(twinId));
    },

    async call(serverId, tool, args, options = {}) {
      // The server as a twin's turn was just offered it (kept until a notice), else read now.
      const server = cachedServer(serverId) ?? (await findMcpServerById(db, serverId));
      if (!server || server.status !== 'active') throw new ConnectorUnavailableError();
      if (server.allowedTools.length && !server.allowedTools.includes(tool)) throw new ConnectorUnavailableError();
      const input = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      try {
        return resultOf(await pool.callTool(endpointOf(server, secrets), tool, input, options));
      } catch (error) {
        // The server answered the call with an error (unknown tool, bad arguments): the tool failed.
        if (isMcpError(error)) return { text: error.message, isError: true, raw: { error: { code: error.code, message: error.message } } };
        throw error;
      }
    },

    async close() {
      unsubscribe?.();
      await pool.closeAll();
    },
  };
}
