// /api/user/institutions, /api/user/institution/{switch,join}, /api/user/userInstitution/{id}:
// a person's own memberships (spec and contract additions).
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, objectId, type App } from '../../platform/http/schemas.js';
import { profileSchema } from '../users/profile.schemas.js';
import type { MembershipsService } from './memberships.service.js';

const tags = ['user: memberships'];
const profileResult = z.object({ success: z.literal(true), profile: profileSchema });

const membershipSchema = z.object({
  _id: z.string().describe('membership id'),
  institution: z.object({ _id: z.string(), name: z.string(), ainame: z.string(), picture: z.string(), status: z.enum(['active', 'inactive']) }),
  role: z.enum(['user', 'admin']),
  permissions: z.array(z.string()),
  current: z.boolean(),
});

export function membershipRoutes(app: App, memberships: MembershipsService): void {
  app.get(
    '/api/user/institutions',
    {
      schema: {
        tags,
        summary: "The caller's memberships",
        description: 'Every twin the caller belongs to (deleted twins excepted), with role, permissions there and whether it is the current one.',
        response: { 200: z.object({ success: z.literal(true), data: z.array(membershipSchema) }), ...failures(401) },
      },
    },
    async (request) => ({ success: true as const, data: await memberships.list(actorOf(request)) }),
  );

  app.post(
    '/api/user/institution/switch',
    {
      schema: {
        tags,
        summary: 'Work in another twin',
        description:
          'The caller must be a member (super admins may switch to any twin); otherwise 404. An inactive twin answers 403 ' +
          'INSTITUTION_INACTIVE (super admins excepted). Switching clears the voice assistant chosen under the previous twin ' +
          'and takes effect at once for every session of the caller. Answers the new profile.',
        body: z.object({ institutionId: objectId }),
        response: { 200: profileResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, profile: await memberships.switchTo(actorOf(request), request.body.institutionId) }),
  );

  app.post(
    '/api/user/institution/join',
    {
      schema: {
        tags,
        summary: 'Join a twin that allows joining',
        description:
          'By `institutionId` or `publicId`. The twin must allow joining (allowJoining open, else 403 JOINING_CLOSED); when ' +
          'joiningAdminOnly is on only admin and super accounts may join by themselves (403 JOINING_ADMIN_ONLY). The caller ' +
          'joins with the user role and the twin becomes current (clearing the chosen voice assistant). Joining a twin one ' +
          'already belongs to just switches to it. Answers the new profile.',
        body: z.union([z.object({ institutionId: objectId }), z.object({ publicId: z.uuid() })]),
        response: { 200: profileResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, profile: await memberships.join(actorOf(request), joinTarget(request.body)) }),
  );

  app.delete(
    '/api/user/userInstitution/:id',
    {
      config: { validationMessage: 'invalid user institution Id' },
      schema: {
        tags,
        summary: 'Leave a twin (remove a membership)',
        description:
          'Failures: 400 invalid user institution Id (malformed id); 401 Authentication Required; 403 Invalid Membership. ' +
          'Not yours! (code NOT_YOURS); 404 Not Found. When the membership was the current twin, the caller is switched to ' +
          'their newest other membership of an active twin (none: no current twin) and the voice assistant choice is cleared.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, message: await memberships.leave(actorOf(request), request.params.id) }),
  );
}

/** The join body names the twin as the spec spells it; the service takes the code's word. */
function joinTarget(body: { institutionId: string } | { publicId: string }): { twinId?: string; publicId?: string } {
  return 'institutionId' in body ? { twinId: body.institutionId } : body;
}
