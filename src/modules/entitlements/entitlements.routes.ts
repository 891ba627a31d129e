// /api/admin/entitlements and /api/admin/entitlement: the admin family of the contract additions.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, type App } from '../../platform/http/schemas.js';
import {
  createEntitlementBody,
  editEntitlementBody,
  entitlementResult,
  entitlementSchema,
  listEntitlementsQuery,
} from './entitlements.schemas.js';
import type { EntitlementsService } from './entitlements.service.js';

const tags = ['admin: entitlements'];
const RULES =
  'Super admins see and write every entitlement; a twin administrator sees those that apply to their twins (directly or ' +
  'through the twin\'s account) and may not change them (403 SUPER_ONLY). Any other entitlement answers 404. ';

export function entitlementRoutes(app: App, service: EntitlementsService): void {
  app.get(
    '/api/admin/entitlements',
    {
      schema: {
        tags,
        summary: 'List entitlements (paginated, searchable by name)',
        description: RULES,
        querystring: listEntitlementsQuery,
        response: {
          200: z.object({ success: z.literal(true), data: z.array(entitlementSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401),
        },
      },
    },
    async (request) => service.list(actorOf(request), request.query),
  );

  app.get(
    '/api/admin/entitlement/:id',
    { schema: { tags, summary: 'One entitlement', description: RULES, params: idParams, response: { 200: entitlementResult, ...failures(400, 401, 404) } } },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.post(
    '/api/admin/entitlement',
    {
      schema: {
        tags,
        summary: 'Create an entitlement (super admins)',
        description: RULES + 'Give exactly one of `institution` and `accountId` (400 TARGET_REQUIRED otherwise).',
        body: createEntitlementBody,
        response: { 201: entitlementResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.put(
    '/api/admin/entitlement/:id',
    {
      schema: {
        tags,
        summary: 'Edit an entitlement (super admins)',
        description: RULES,
        params: idParams,
        body: editEntitlementBody,
        response: { 200: entitlementResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.edit(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/entitlement/:id',
    {
      schema: { tags, summary: 'Delete an entitlement (super admins)', description: RULES, params: idParams, response: { 200: messageSchema, ...failures(400, 401, 403, 404) } },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Entitlement deleted' };
    },
  );

  app.post(
    '/api/admin/entitlements/bulk-delete',
    {
      schema: {
        tags,
        summary: 'Delete many entitlements (behaviour 13)',
        description: RULES + 'Rows the caller may not delete are left alone; `changed` counts the rows deleted.',
        body: idsBody(1000),
        response: { 200: changedSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkDelete(actorOf(request), request.body.ids) }),
  );
}
