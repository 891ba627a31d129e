// /api/admin/sso-providers: a twin's own sign-in providers, with bulk delete.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, messageSchema, objectId, paginationQuery, type App } from '../../platform/http/schemas.js';
import { ssoProviderCreateBody, ssoProviderSchema, ssoProviderUpdateBody } from './sso-providers.schemas.js';
import type { SsoProviderService } from './sso-providers.service.js';

const one = z.object({ success: z.literal(true), data: ssoProviderSchema });
const NOTE =
  "Needs sso.edit in the caller's current twin; another twin's provider answers 404. The client secret is sealed " +
  'at rest and never returned (hasClientSecret tells whether one is set). Sign-ins through a twin\'s provider open ' +
  'sessions restricted to that twin until the person confirms with a code.';

const ISSUER_RULE =
  'The issuer must be https (http only on loopback, for development), and is the issuer itself: a discovery document URL (containing /.well-known/) answers 400 ISSUER_IS_DISCOVERY_URL; the metadata discovered there must name this very issuer. ' +
  'An issuer whose host resolves to a loopback, private, link-local or cloud metadata address answers 400 URL_NOT_ALLOWED unless the host is in OUTBOUND_ALLOWED_HOSTS; every request to the provider goes through the same guard.';

export function ssoProviderRoutes(app: App, service: SsoProviderService): void {
  app.get(
    '/api/admin/sso-providers',
    {
      schema: {
        tags: ['admin'],
        summary: "List the current twin's SSO providers",
        description: NOTE,
        querystring: paginationQuery.omit({ search: true }),
        response: {
          200: z.object({ success: z.literal(true), data: z.array(ssoProviderSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => ({ success: true as const, ...(await service.list(actorOf(request), request.query.page, request.query.limit)) }),
  );

  app.post(
    '/api/admin/sso-provider',
    {
      schema: {
        tags: ['admin'],
        summary: 'Add an SSO provider to the current twin',
        description: `${NOTE} ${ISSUER_RULE}`,
        body: ssoProviderCreateBody,
        response: { 201: one, ...failures(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.get(
    '/api/admin/sso-provider/:id',
    {
      schema: { tags: ['admin'], summary: 'One SSO provider', description: NOTE, params: idParams, response: { 200: one, ...failures(400, 401, 403, 404) } },
    },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.put(
    '/api/admin/sso-provider/:id',
    {
      schema: {
        tags: ['admin'],
        summary: 'Edit an SSO provider',
        description: `${NOTE} ${ISSUER_RULE} An empty or absent clientSecret keeps the stored one, unless the issuer moves to another origin (scheme, host or port): then the stored secret is removed.`,
        params: idParams,
        body: ssoProviderUpdateBody,
        response: { 200: one, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.update(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/sso-provider/:id',
    {
      schema: { tags: ['admin'], summary: 'Delete an SSO provider', description: NOTE, params: idParams, response: { 200: messageSchema, ...failures(400, 401, 403, 404) } },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'SSO provider deleted' };
    },
  );

  app.post(
    '/api/admin/sso-providers/bulk-delete',
    {
      schema: {
        tags: ['admin'],
        summary: 'Delete several SSO providers',
        description: `${NOTE} Ids of other twins are skipped; changed counts the deleted ones.`,
        body: z.object({ ids: z.array(objectId).min(1).max(500) }),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkRemove(actorOf(request), request.body.ids) }),
  );
}
