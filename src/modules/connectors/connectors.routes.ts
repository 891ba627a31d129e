// /api/admin/mcp-server(s): connectors (MCP servers) as admin records, and their tools listed again.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, type App } from '../../platform/http/schemas.js';
import { mcpServerCreateBody, mcpServerSchema, mcpServersQuery, mcpServerUpdateBody } from './connectors.schemas.js';
import type { ConnectorService } from './connectors.service.js';

const TAGS = ['mcp-servers'];
const CREDENTIAL_RULE =
  'The credential is stored encrypted and never shown: records carry hasCredential only. It is sent as Authorization: Bearer <credential>, or raw in credentialHeader when set. On PUT an empty or missing credential keeps the stored one; null removes it.';
const SCOPE_RULE =
  "Needs mcp.edit on the server's twin (a twin's administrators hold it). Servers of every twin (institution null) are read by any such administrator and written by super admins only. A server outside the caller's twins answers 404 \"MCP server not found\".";
const SAVE_RULE =
  'The URL must be http(s) and its host must resolve only to public addresses (loopback, private, link-local and cloud metadata addresses answer 400 CONNECTOR_URL_NOT_ALLOWED unless the host is in OUTBOUND_ALLOWED_HOSTS). A save that moves the server to another origin (scheme, host or port) without a new credential removes the stored one. Each save lists the server\'s tools; a server that cannot be reached is saved all the same, with the reason in toolsError.';
const envelope = z.object({ success: z.literal(true), data: mcpServerSchema });

export function connectorRoutes(app: App, service: ConnectorService): void {
  app.get(
    '/api/admin/mcp-servers',
    {
      schema: {
        tags: TAGS,
        summary: 'List connectors (MCP servers)',
        description: `Paginated, newest first: the servers of the twins where the caller holds mcp.edit and those of every twin (super admins: all). search matches the name or URL. 403 when the caller holds mcp.edit nowhere. ${SCOPE_RULE}`,
        querystring: mcpServersQuery,
        response: {
          200: z.object({ success: z.literal(true), data: z.array(mcpServerSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.list(actorOf(request), request.query)) }),
  );

  app.post(
    '/api/admin/mcp-server',
    {
      schema: {
        tags: TAGS,
        summary: 'Add a connector (MCP server)',
        description: `institution omitted: the caller's current twin; null: every twin (super admins only). A name already used in that place answers 409 MCP_SERVER_NAME_TAKEN. ${SAVE_RULE} ${CREDENTIAL_RULE} ${SCOPE_RULE}`,
        body: mcpServerCreateBody,
        response: { 201: envelope, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.get(
    '/api/admin/mcp-server/:id',
    {
      schema: { tags: TAGS, summary: 'Read a connector (MCP server)', description: `${SCOPE_RULE} ${CREDENTIAL_RULE}`, params: idParams, response: { 200: envelope, ...failures(400, 401, 404) } },
    },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.put(
    '/api/admin/mcp-server/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Edit a connector (MCP server)',
        description: `Any fields; the twin of a server does not change. ${SAVE_RULE} ${CREDENTIAL_RULE} ${SCOPE_RULE}`,
        params: idParams,
        body: mcpServerUpdateBody,
        response: { 200: envelope, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request) => ({ success: true as const, data: await service.update(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/mcp-server/:id',
    {
      schema: { tags: TAGS, summary: 'Delete a connector (MCP server)', description: `Its tools leave every turn at once. ${SCOPE_RULE}`, params: idParams, response: { 200: messageSchema, ...failures(400, 401, 403, 404) } },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'MCP server deleted' };
    },
  );

  app.post(
    '/api/admin/mcp-servers/bulk-delete',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete several connectors (MCP servers)',
        description: 'Deletes those of ids in the twins where the caller holds mcp.edit (super admins: any, servers of every twin included); others are left alone. changed counts the deleted ones. 403 when the caller holds mcp.edit nowhere.',
        body: idsBody(),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkDelete(actorOf(request), request.body.ids) }),
  );

  app.post(
    '/api/admin/mcp-server/:id/refresh',
    {
      schema: {
        tags: TAGS,
        summary: "List a connector's tools again",
        description: `Asks the server for its tools now and records them, or why it could not be reached (toolsError; the tools listed before are kept). ${SCOPE_RULE}`,
        params: idParams,
        body: z.unknown().optional(),
        response: { 200: envelope, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.refresh(actorOf(request), request.params.id) }),
  );
}
