// /api/admin/membership/{id}: a twin's administrators set a member's role and extra permission grants,
// or remove the person from the twin (admin-memberships.service.ts).
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { PERMISSIONS } from '../../platform/http/permissions.js';
import { failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import type { AdminMembershipsService } from './admin-memberships.service.js';
import { membershipRole } from './admin-users.schemas.js';

const membershipSchema = z.object({
  _id: z.string(),
  institution: z.string(),
  user: z.string(),
  role: membershipRole,
  permissions: z.array(z.string()),
});

export function adminMembershipRoutes(app: App, service: AdminMembershipsService): void {
  app.put(
    '/api/admin/membership/:id',
    {
      schema: {
        tags: ['admin: users'],
        summary: "Set a member's role and permission grants in a twin",
        description:
          'Needs users.edit in the membership\'s twin (404 Membership not found when the caller cannot see that twin\'s ' +
          'people). `permissions` are grants from the fixed list, held on top of the user role (admins hold all). Super ' +
          'accounts: super admins only (403 SUPER_ONLY); one\'s own membership: 400 SELF_ACTION. Takes effect at once.',
        params: idParams,
        body: z.object({ role: membershipRole.optional(), permissions: z.array(z.enum(PERMISSIONS)).max(PERMISSIONS.length).optional() }),
        response: { 200: z.object({ success: z.literal(true), data: membershipSchema }), ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.edit(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/membership/:id',
    {
      schema: {
        tags: ['admin: users'],
        summary: 'Remove a person from a twin',
        description:
          'Same access as the edit. When it was the person\'s current twin they move to their newest other membership ' +
          'of an active twin (or none) and their voice assistant choice is cleared. The account itself stays.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Membership removed' };
    },
  );
}
