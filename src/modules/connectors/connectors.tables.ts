// Connectors: MCP servers a twin's assistants may call tools of (institution_id), or every twin's
// (institution_id null, super admins only). The credential is sealed with the secret box and never
// shown; the tools are those the server listed when the record was last saved or refreshed.
import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, stringList, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import type { JsonSchemaObject } from '../../ai/tools/connector-catalog.js';

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export const MCP_SERVER_STATUSES = ['active', 'inactive'] as const;

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
}

export const mcpServers = pgTable(
  'mcp_servers',
  {
    id: idColumn(),
    twinId: refColumn('institution_id'),
    name: text('name').notNull(),
    url: text('url').notNull(),
    transport: text('transport', { enum: MCP_TRANSPORTS }).notNull().default('streamable-http'),
    credentialSealed: text('credential_sealed'),
    /** Null: `Authorization: Bearer <credential>`; otherwise the raw credential goes in this header. */
    credentialHeader: text('credential_header'),
    requireApproval: boolean('require_approval').notNull().default(true),
    status: text('status', { enum: MCP_SERVER_STATUSES }).notNull().default('active'),
    /** The server's tools the twin may use; empty: all of them. */
    allowedTools: stringList('allowed_tools'),
    tools: jsonb('tools').$type<ListedTool[]>().notNull().default(sql`'[]'::jsonb`),
    /** Why the last listing failed; null when it succeeded. */
    toolsError: text('tools_error'),
    toolsListedAt: timestampColumn('tools_listed_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('mcp_servers_institution_name_key').on(t.twinId, sql`lower(${t.name})`),
    uniqueIndex('mcp_servers_global_name_key').on(sql`lower(${t.name})`).where(sql`${t.twinId} is null`),
    index('mcp_servers_institution_status_idx').on(t.twinId, t.status),
  ],
);

export type McpServerRow = typeof mcpServers.$inferSelect;
export type NewMcpServer = typeof mcpServers.$inferInsert;
