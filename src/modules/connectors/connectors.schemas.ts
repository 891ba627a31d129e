// Wire shapes of connectors (MCP servers): the admin record (the credential only as hasCredential),
// the bodies, and the tools list of /api/admin/tools.
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';
import { MCP_SERVER_STATUSES, MCP_TRANSPORTS } from './connectors.tables.js';

export const mcpServerSchema = z
  .object({
    _id: z.string(),
    name: z.string(),
    url: z.string(),
    transport: z.enum(MCP_TRANSPORTS),
    institution: z.string().nullable().describe('twin id; null for a server of every twin (super admins only)'),
    hasCredential: z.boolean().describe('whether a credential is stored; the credential itself is never shown'),
    credentialHeader: z.string().nullable().describe('the header carrying the raw credential; null: Authorization: Bearer <credential>'),
    requireApproval: z.boolean().describe('a call of one of its tools waits for the person to approve it'),
    status: z.enum(MCP_SERVER_STATUSES),
    allowedTools: z.array(z.string()).describe('the tools the twin may use; empty: all of them'),
    tools: z.array(z.object({ name: z.string(), description: z.string() })).describe('the tools the server listed at the last save or refresh'),
    toolsError: z.string().nullable().describe('why the last listing failed (e.g. the server could not be reached); null when it succeeded'),
    toolsListedAt: z.string().nullable().describe('when the tools were last listed successfully'),
    created: z.string(),
    updated: z.string(),
  })
  .describe('Connector (MCP server)');
export type McpServerWire = z.infer<typeof mcpServerSchema>;

// A header name per RFC 9110 (a token), and never one the transport itself sets.
const RESERVED_HEADERS = ['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
const headerName = z
  .string()
  .trim()
  .max(100)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]*$/, 'must be an HTTP header name')
  .refine((name) => !RESERVED_HEADERS.includes(name.toLowerCase()), 'is a header the connection sets itself');
const credential = z
  .string()
  .max(8_192)
  .regex(/^[^\r\n\0]*$/, 'must be a single line')
  .describe('stored encrypted, never shown back');
const url = z
  .string()
  .trim()
  .min(1)
  .max(2_048)
  .refine((value) => URL.canParse(value), 'must be a URL')
  .describe('http(s) URL of the server (Streamable HTTP endpoint, or the SSE endpoint)');
const toolNames = z.array(z.string().trim().min(1).max(200)).max(500);

export const mcpServerCreateBody = z.object({
  name: z.string().trim().min(1).max(100),
  url,
  transport: z.enum(MCP_TRANSPORTS).optional().describe('default streamable-http'),
  institution: objectId.nullable().optional().describe("omitted: the caller's current twin; null: every twin (super admins only)"),
  credential: credential.nullable().optional(),
  credentialHeader: headerName.nullable().optional().describe('omitted, empty or null: Authorization: Bearer <credential>'),
  requireApproval: z.boolean().optional().describe('default true'),
  status: z.enum(MCP_SERVER_STATUSES).optional().describe('default active'),
  allowedTools: toolNames.optional().describe('the tools the twin may use; omitted or empty: all of them'),
});
export type McpServerCreateInput = z.infer<typeof mcpServerCreateBody>;

export const mcpServerUpdateBody = mcpServerCreateBody
  .omit({ institution: true, credential: true })
  .partial()
  .extend({
    credential: credential.nullable().optional().describe('empty or omitted: the stored credential is kept; null: it is removed; otherwise it replaces the stored one'),
  });
export type McpServerUpdateInput = z.infer<typeof mcpServerUpdateBody>;

export const mcpServersQuery = paginationQuery.extend({ institution: objectId.optional() });
export type McpServersQuery = z.infer<typeof mcpServersQuery>;

export const toolSchema = z
  .object({
    name: z.string().describe('the name assistants (tools) and toolsDisabled use; a connector tool is <server>__<tool>'),
    kind: z.enum(['builtin', 'connector']),
    description: z.string(),
    enabled: z.boolean().describe("not in the twin's toolsDisabled"),
    server: z.object({ _id: z.string(), name: z.string() }).nullable().describe('the connector; null for a built-in'),
    tool: z.string().describe("the tool's own name on its server (the built-in's name)"),
    requireApproval: z.boolean(),
  })
  .describe('Tool');
export type ToolWire = z.infer<typeof toolSchema>;

export const toolParams = z.object({ name: z.string().min(1).max(200) });
export const toolUpdateBody = z.object({ enabled: z.boolean() });
