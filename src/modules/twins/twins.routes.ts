// /api/admin/institution(s): Digital Twins, their settings and branding (contract additions).
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { bulkActionBody, changedSchema, failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import {
  adminTwinSchema,
  createTwinBody,
  editTwinBody,
  twinResult,
  listTwinsQuery,
} from './twins.schemas.js';
import type { TwinsService } from './twins.service.js';

const tags = ['admin: institutions'];
const SCOPE = 'A twin where the caller lacks the permission answers 404 Institution not found. ';

export function twinRoutes(app: App, twins: TwinsService): void {
  app.post(
    '/api/admin/institution',
    {
      schema: {
        tags,
        summary: 'Create a Digital Twin (super admins)',
        description: 'Any writable field may be given; `name` is required. 403 SUPER_ONLY for anyone but a super admin.',
        body: createTwinBody,
        response: { 201: twinResult, ...failures(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await twins.create(actorOf(request), request.body) }),
  );

  app.get(
    '/api/admin/institutions',
    {
      schema: {
        tags,
        summary: 'List Digital Twins (paginated, searchable)',
        description: 'Twins where the caller holds institutions.list (all for a super admin); `search` matches name and ainame.',
        querystring: listTwinsQuery,
        response: {
          200: z.object({ success: z.literal(true), data: z.array(adminTwinSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401),
        },
      },
    },
    async (request) => twins.list(actorOf(request), request.query),
  );

  app.get(
    '/api/admin/institution/:id',
    {
      schema: {
        tags,
        summary: 'One Digital Twin with its settings',
        description: SCOPE + 'Needs institutions.list.',
        params: idParams,
        response: { 200: twinResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await twins.get(actorOf(request), request.params.id) }),
  );

  app.put(
    '/api/admin/institution/:id',
    {
      schema: {
        tags,
        summary: 'Edit a Digital Twin: settings and branding',
        description:
          SCOPE +
          'Needs institutions.edit. Settings: guardrails (guardrailsEnabled, guardrailsText; behaviour 8), memory ' +
          '(longTermMemoryEnabled, memoryAdminsOnly, defaultMemoryMode: enabling long-term memory also sets memoryAdminsOnly ' +
          "false and defaultMemoryMode 'long_term' in the same save, behaviour 6), reasoningEffort, usage caps (userDailyLimit, " +
          'twinDailyLimit: turns per 24 hours, null = unlimited), voice (rtEnabled, rtAdminOnly, rtVoice, voice_agent_id), ' +
          'embedding (publicAuthorizedUrls, embedGuidanceEnabled, liveTranscriptEnabled) and branding (about, picture, ' +
          'picture_bg, picture_animated, picture_dark_bg, ainame). Credits change only through the award route; publicId, ' +
          'creditsUsed and stored provider tokens are read-only. accountId is for super admins (listed in ignoredFields ' +
          'otherwise): the twin joins that account (an unknown one: 404 ACCOUNT_NOT_FOUND), null leaves it. Unknown keys are dropped.',
        params: idParams,
        body: editTwinBody,
        response: { 200: twinResult, ...failures(400, 401, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      message: 'Institution updated',
      ...(await twins.edit(actorOf(request), request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/admin/institution/:id',
    {
      schema: {
        tags,
        summary: 'Delete a Digital Twin (soft; super admins)',
        description: SCOPE + 'The twin is deactivated and hidden; its data stays. 403 SUPER_ONLY for a twin administrator.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await twins.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Institution deleted' };
    },
  );

  app.post(
    '/api/admin/institutions/bulk',
    {
      schema: {
        tags,
        summary: 'Activate, deactivate or delete many twins (behaviour 13)',
        description:
          'activate/deactivate act on twins where the caller holds institutions.edit; delete (soft) only for super admins. ' +
          'Other rows are left alone; `changed` counts the rows that changed.',
        body: bulkActionBody,
        response: { 200: changedSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, changed: await twins.bulk(actorOf(request), request.body.action, request.body.ids) }),
  );
}
