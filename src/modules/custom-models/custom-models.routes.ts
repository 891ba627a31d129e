// /api/user/customModels (models available to the current twin) and /api/admin/ai-model(s) (admin CRUD).
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, objectId, type App } from '../../platform/http/schemas.js';
import {
  adminCustomModelSchema,
  adminModelsQuery,
  customModelCreateBody,
  customModelSchema,
  customModelUpdateBody,
} from './custom-models.schemas.js';
import type { CustomModelService } from './custom-models.service.js';

const TAGS = ['ai-models'];
const KEY_RULE = 'The API key is stored encrypted and never shown: the view carries apiKeySet only. Saving with apiKey empty or missing keeps the stored key, unless baseUrl moves to another origin (scheme, host or port): then the stored key is removed; clearApiKey: true removes it. A baseUrl whose host resolves to a loopback, private, link-local or cloud metadata address answers 400 URL_NOT_ALLOWED unless the host is in OUTBOUND_ALLOWED_HOSTS; an empty baseUrl is the deployment\'s own endpoint.';
const SCOPE_RULE = "Needs models.edit on the model's twin (a twin's administrators hold it). Deployment-wide models (institution null) are read by any such administrator and written by super admins only. A model outside the caller's twins answers 404 \"AI model not found\".";
const envelope = z.object({ success: z.literal(true), data: adminCustomModelSchema });

export function customModelRoutes(app: App, service: CustomModelService): void {
  app.post(
    '/api/user/customModels',
    {
      schema: {
        tags: TAGS,
        summary: 'List the custom AI models available to the current twin',
        description: "Active models of the caller's current twin and deployment-wide ones; a twin's model hides a deployment-wide one of the same name. No body.",
        body: z.unknown().optional(),
        response: { 200: z.object({ success: z.literal(true), data: z.array(customModelSchema) }), ...failures(401) },
      },
    },
    async (request) => ({ success: true as const, data: await service.available(actorOf(request)) }),
  );

  app.get(
    '/api/admin/ai-models',
    {
      schema: {
        tags: TAGS,
        summary: 'List custom AI models (admin)',
        description: `Paginated, newest first, across the twins where the caller holds models.edit, plus deployment-wide models. 403 when the caller holds models.edit nowhere. ${SCOPE_RULE}`,
        querystring: adminModelsQuery,
        response: {
          200: z.object({ success: z.literal(true), data: z.array(adminCustomModelSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.list(actorOf(request), request.query)) }),
  );

  app.get(
    '/api/admin/ai-model/:id',
    {
      schema: { tags: TAGS, summary: 'Read a custom AI model (admin)', description: `${SCOPE_RULE} ${KEY_RULE}`, params: idParams, response: { 200: envelope, ...failures(400, 401, 404) } },
    },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.post(
    '/api/admin/ai-model',
    {
      schema: {
        tags: TAGS,
        summary: 'Add a custom AI model (admin)',
        description: `institution omitted: the caller's current twin; null: deployment-wide (super admins only). A name already used in that place answers 409. ${SCOPE_RULE} ${KEY_RULE}`,
        body: customModelCreateBody,
        response: { 201: envelope, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.put(
    '/api/admin/ai-model/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Edit a custom AI model (admin)',
        description: `Any fields; the twin of a model does not change. ${SCOPE_RULE} ${KEY_RULE}`,
        params: idParams,
        body: customModelUpdateBody,
        response: { 200: envelope, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request) => ({ success: true as const, data: await service.update(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/ai-model/:id',
    {
      schema: { tags: TAGS, summary: 'Delete a custom AI model (admin)', description: SCOPE_RULE, params: idParams, response: { 200: messageSchema, ...failures(400, 401, 403, 404) } },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'AI model deleted' };
    },
  );

  app.post(
    '/api/admin/ai-models/bulk-delete',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete several custom AI models (admin)',
        description: "Deletes those of ids in the twins where the caller holds models.edit (super admins: any, deployment-wide included); others are left alone. changed counts the deleted ones.",
        body: idsBody(),
        response: { 200: changedSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkDelete(actorOf(request), request.body.ids) }),
  );
}
