// /api/admin/tools and /api/admin/tool/{name}: which tools the current twin's assistants may use.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { toolParams, toolSchema, toolUpdateBody } from './connectors.schemas.js';
import type { ToolService } from './tools.service.js';

const TAGS = ['tools'];
const RULE =
  "The caller's current twin; needs tools.edit there (403 otherwise; 404 without a current twin). Connector tools are those of the twin's active connectors and of every twin's, each connector's allowedTools applied, named <server>__<tool>.";

export function toolRoutes(app: App, service: ToolService): void {
  app.get(
    '/api/admin/tools',
    {
      schema: {
        tags: TAGS,
        summary: "List the tools of the current twin's assistants",
        description: `The built-in tools (file_search, memory, delegate) and each active connector's tools, with enabled (not in the twin's toolsDisabled). ${RULE}`,
        response: { 200: z.object({ success: z.literal(true), data: z.array(toolSchema) }), ...failures(401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.list(actorOf(request)) }),
  );

  app.put(
    '/api/admin/tool/:name',
    {
      schema: {
        tags: TAGS,
        summary: 'Enable or disable a tool for the current twin',
        description: `Takes the tool out of the twin's toolsDisabled, or adds it. A name the twin does not have answers 404 TOOL_NOT_FOUND. ${RULE}`,
        params: toolParams,
        body: toolUpdateBody,
        response: { 200: z.object({ success: z.literal(true), data: toolSchema }), ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.setEnabled(actorOf(request), request.params.name, request.body.enabled) }),
  );
}
