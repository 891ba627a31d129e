// /api/admin/lti-platforms and /api/admin/lti-platform: the LTI 1.3 platforms whose course pages may open a twin.
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, twinFilter, type App } from '../../platform/http/schemas.js';
import { createLtiPlatformBody, editLtiPlatformBody, listLtiPlatformsQuery, ltiPlatformList, ltiPlatformResult } from './lti-platforms.schemas.js';
import type { LtiPlatformsService } from './lti-platforms.service.js';

const tags = ['admin: lti'];
const RULES =
  'An LTI 1.3 platform (a course platform such as Moodle or Canvas) opens launch sessions in its twin for the ' +
  "courses listed in the twin's `ltiContextIds`. Managing them needs sso.edit in their twin (a twin administrator " +
  "holds it, a super admin holds it everywhere); another twin's platform answers 404 LTI_PLATFORM_NOT_FOUND. " +
  'Give the platform `toolLoginUrl` (login initiation) and `toolLaunchUrl` (redirect and target link URI). ';
const URL_RULES =
  'issuer, authLoginUrl and jwksUrl must be https (http only on loopback, for development); one whose host resolves ' +
  'to a loopback, private, link-local or cloud metadata address answers 400 URL_NOT_ALLOWED unless the host is in ' +
  'OUTBOUND_ALLOWED_HOSTS, and every request to the platform goes through the same guard. A twin registers an issuer ' +
  'and client id once (409 LTI_PLATFORM_EXISTS). ';

export function ltiPlatformRoutes(app: App, service: LtiPlatformsService): void {
  app.get(
    '/api/admin/lti-platforms',
    {
      schema: {
        tags,
        summary: 'List LTI platforms (paginated)',
        description: RULES + 'Of every twin where the caller holds sso.edit, or of one of them (`institutionId`; a twin outside the scope lists none). No grant anywhere: 403.',
        querystring: listLtiPlatformsQuery,
        response: { 200: ltiPlatformList, ...failures(400, 401, 403) },
      },
    },
    async (request) => service.list(actorOf(request), twinFilter(request.query)),
  );

  app.get(
    '/api/admin/lti-platform/:id',
    { schema: { tags, summary: 'One LTI platform', description: RULES, params: idParams, response: { 200: ltiPlatformResult, ...failures(400, 401, 404) } } },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.post(
    '/api/admin/lti-platform',
    {
      schema: {
        tags,
        summary: 'Register an LTI platform with a twin',
        description:
          RULES +
          URL_RULES +
          "The twin is `institution`, or the caller's current twin (400 INSTITUTION_REQUIRED without either); an unknown twin or one " +
          'the caller is not in 404, a member without sso.edit 403.',
        body: createLtiPlatformBody,
        response: { 201: ltiPlatformResult, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.put(
    '/api/admin/lti-platform/:id',
    {
      schema: {
        tags,
        summary: 'Edit an LTI platform',
        description: RULES + URL_RULES + 'The given fields are applied (deploymentIds replaces the list); the twin does not change; unknown keys are dropped.',
        params: idParams,
        body: editLtiPlatformBody,
        response: { 200: ltiPlatformResult, ...failures(400, 401, 404, 409) },
      },
    },
    async (request) => ({ success: true as const, data: await service.edit(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/lti-platform/:id',
    { schema: { tags, summary: 'Remove an LTI platform', description: RULES, params: idParams, response: { 200: messageSchema, ...failures(400, 401, 404) } } },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'LTI platform deleted' };
    },
  );
}
