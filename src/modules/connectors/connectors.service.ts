// Connectors (MCP servers) as admin records. Administrators holding mcp.edit manage their twins'
// servers; servers of every twin (no twin) are read by any such administrator and written by super
// admins only. Every save checks the URL with the outbound guard and lists the server's tools; a server
// that cannot be reached is saved all the same, with why on the record. The credential is sealed at once
// and never shown (behaviour 9): an empty or missing credential on save keeps the stored one, unless the
// save moves the server to another origin (platform/net/secret-after-move.ts).
import type { McpPool } from '../../ai/mcp/mcp-pool.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { Actor } from '../../platform/http/actor.js';
import { ConflictError, NotFoundError } from '../../platform/http/errors.js';
import { refuseUnlessAllowed, type OutboundPolicy } from '../../platform/net/outbound-guard.js';
import { secretAfterMove, type SecretChange } from '../../platform/net/secret-after-move.js';
import { requireAccess } from '../access/access.js';
import { findTwinById } from '../twins/twins.repo.js';
import { endpointOf, scrubbed } from './connector-endpoint.js';
import { presentMcpServer } from './connectors.presenter.js';
import { deleteMcpServers, findMcpServerById, insertMcpServer, listMcpServersForAdmin, updateMcpServer } from './connectors.repo.js';
import type { McpServerCreateInput, McpServerUpdateInput, McpServersQuery, McpServerWire } from './connectors.schemas.js';
import type { ListedTool, McpServerRow, NewMcpServer } from './connectors.tables.js';

export const MCP_SERVER_NOT_FOUND = 'MCP server not found';
export const CONNECTOR_URL_NOT_ALLOWED = 'CONNECTOR_URL_NOT_ALLOWED';
const MAX_TOOLS = 500;

export interface ConnectorServiceDeps {
  db: Database;
  secrets: SecretBox;
  policy: OutboundPolicy;
  pool: Pick<McpPool, 'listTools' | 'close'>;
}

export function createConnectorService({ db, secrets, policy, pool }: ConnectorServiceDeps) {
  function columns(body: McpServerUpdateInput, stored?: McpServerRow): Partial<NewMcpServer> {
    const values: Partial<NewMcpServer> = {
      name: body.name,
      url: body.url,
      transport: body.transport,
      requireApproval: body.requireApproval,
      status: body.status,
      allowedTools: body.allowedTools ? [...new Set(body.allowedTools)] : undefined,
      credentialHeader: body.credentialHeader === undefined ? undefined : body.credentialHeader || null,
    };
    // Behaviour 9: an empty or missing credential keeps the stored one; null removes it; so does a move to another origin.
    const given: SecretChange = body.credential ? { set: body.credential } : body.credential === null ? 'remove' : 'keep';
    const change = stored ? secretAfterMove(stored.url, body.url, given) : given;
    if (change === 'remove') values.credentialSealed = null;
    else if (change !== 'keep') values.credentialSealed = secrets.encrypt(change.set);
    return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<NewMcpServer>;
  }

  /** Refuses a URL the outbound guard refuses; a host that does not resolve is left to the listing. */
  const guard = (url: string) => refuseUnlessAllowed(policy, url, CONNECTOR_URL_NOT_ALLOWED);

  async function save<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('An MCP server with this name already exists', 'MCP_SERVER_NAME_TAKEN');
      throw error;
    }
  }

  /** Lists the server's tools and records them, or why they could not be listed. */
  async function listTools(row: McpServerRow): Promise<McpServerRow> {
    const endpoint = endpointOf(row, secrets);
    let values: Partial<NewMcpServer>;
    try {
      const tools: ListedTool[] = (await pool.listTools(endpoint)).slice(0, MAX_TOOLS);
      values = { tools, toolsError: null, toolsListedAt: new Date() };
    } catch (error) {
      const credential = Object.values(endpoint.headers)[0]?.replace(/^Bearer /, '');
      values = { toolsError: scrubbed(error instanceof Error ? error.message : String(error), credential) };
    }
    return (await updateMcpServer(db, row.id, values)) ?? row;
  }

  /** The server as an admin may reach it: 404 outside their twins; writes of servers of every twin need a super admin. */
  async function reach(actor: Actor, id: string, intent: 'read' | 'write'): Promise<McpServerRow> {
    const row = await findMcpServerById(db, id);
    await requireAccess(db, actor, intent === 'read' ? 'mcp.read' : 'mcp.write', { server: row });
    return row!;
  }

  return {
    async list(actor: Actor, query: McpServersQuery) {
      const twins = await requireAccess(db, actor, 'twins.managed', { permission: 'mcp.edit' });
      const { rows, total } = await listMcpServersForAdmin(db, { twins, twinId: query.institution, search: query.search, page: query.page, limit: query.limit });
      return { data: rows.map(presentMcpServer), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string): Promise<McpServerWire> {
      return presentMcpServer(await reach(actor, id, 'read'));
    },

    async create(actor: Actor, body: McpServerCreateInput): Promise<McpServerWire> {
      const twinId = body.institution === undefined ? actor.twinId : body.institution;
      await requireAccess(db, actor, 'mcp.create', { twinId });
      if (twinId !== null) {
        if (!(await findTwinById(db, twinId))) throw new NotFoundError('Institution not found', 'INSTITUTION_NOT_FOUND');
      }
      await guard(body.url);
      const row = await save(() => insertMcpServer(db, { ...columns(body), name: body.name, url: body.url, twinId }));
      return presentMcpServer(await listTools(row));
    },

    async update(actor: Actor, id: string, body: McpServerUpdateInput): Promise<McpServerWire> {
      const stored = await reach(actor, id, 'write');
      if (body.url !== undefined) await guard(body.url);
      const row = await save(() => updateMcpServer(db, id, columns(body, stored)));
      if (!row) throw new NotFoundError(MCP_SERVER_NOT_FOUND, 'MCP_SERVER_NOT_FOUND');
      return presentMcpServer(await listTools(row));
    },

    async refresh(actor: Actor, id: string): Promise<McpServerWire> {
      const row = await reach(actor, id, 'write');
      await guard(row.url);
      return presentMcpServer(await listTools(row));
    },

    async remove(actor: Actor, id: string): Promise<void> {
      await reach(actor, id, 'write');
      await deleteMcpServers(db, [id], 'all');
      await pool.close(id);
    },

    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      const twins = await requireAccess(db, actor, 'twins.managed', { permission: 'mcp.edit' });
      const deleted = await deleteMcpServers(db, ids, twins);
      await Promise.all(deleted.map((id) => pool.close(id)));
      return deleted.length;
    },
  };
}

export type ConnectorService = ReturnType<typeof createConnectorService>;
