// Shapes a connector record field by field. The sealed credential never leaves the server: admins see
// only hasCredential; the tools only by name and description.
import type { McpServerWire } from './connectors.schemas.js';
import type { McpServerRow } from './connectors.tables.js';

export function presentMcpServer(row: McpServerRow): McpServerWire {
  return {
    _id: row.id,
    name: row.name,
    url: row.url,
    transport: row.transport,
    institution: row.twinId,
    hasCredential: Boolean(row.credentialSealed),
    credentialHeader: row.credentialHeader,
    requireApproval: row.requireApproval,
    status: row.status,
    allowedTools: row.allowedTools,
    tools: row.tools.map((tool) => ({ name: tool.name, description: tool.description })),
    toolsError: row.toolsError,
    toolsListedAt: row.toolsListedAt?.toISOString() ?? null,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}
