// /api/admin/membership/{id}: a twin's administrators set a member's role and extra permission grants,
// or remove the person from the twin. Needs users.edit in that twin; super accounts are for supers only.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { actorOf } from '../../platform/http/auth-guard.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { failures, idParams, messageSchema, type App } from '../../platform/http/schemas.js';
import { memberships, type MembershipRow } from '../institutions/institutions.tables.js';
import { deleteMembership, findMembershipById, nextTwinFor } from '../memberships/memberships.repo.js';
import { hasPermission } from '../institutions/access.js';
import { PERMISSIONS } from '../../platform/http/permissions.js';
import { findUserById, updateUser } from '../users/users.repo.js';
import { SUPER_ONLY_EDIT } from './admin-users.access.js';
import { membershipRole } from './admin-users.schemas.js';
import type { AdminUsersDeps } from './admin-users.service.js';

const NOT_FOUND = 'Membership not found';
const membershipSchema = z.object({
  _id: z.string(),
  institution: z.string(),
  user: z.string(),
  role: membershipRole,
  permissions: z.array(z.string()),
});
const present = (row: MembershipRow) => ({ _id: row.id, institution: row.institutionId, user: row.userId, role: row.role, permissions: row.permissions });

export function adminMembershipRoutes(app: App, { db, cache }: AdminUsersDeps): void {
  async function authorize(actor: Actor, id: string): Promise<MembershipRow> {
    const membership = await findMembershipById(db, id);
    if (!membership || !(await hasPermission(db, actor, membership.institutionId, 'users.list'))) throw new NotFoundError(NOT_FOUND);
    if (!(await hasPermission(db, actor, membership.institutionId, 'users.edit'))) throw new ForbiddenError('Not authorized', 'FORBIDDEN');
    const person = await findUserById(db, membership.userId);
    if (!person) throw new NotFoundError(NOT_FOUND);
    if (person.accountType === 'super' && !isSuper(actor)) throw new ForbiddenError(SUPER_ONLY_EDIT, 'SUPER_ONLY');
    if (person.id === actor.userId) throw new BadRequestError('You cannot change or remove your own membership here', 'SELF_ACTION');
    return membership;
  }

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
    async (request) => {
      const membership = await authorize(actorOf(request), request.params.id);
      const { role, permissions } = request.body;
      const values = { ...(role ? { role } : {}), ...(permissions ? { permissions: [...new Set(permissions)] } : {}) };
      const [row] = Object.keys(values).length
        ? await db.update(memberships).set(values).where(eq(memberships.id, membership.id)).returning()
        : [membership];
      await cache.invalidate({ userId: membership.userId });
      return { success: true as const, data: present(row) };
    },
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
      const membership = await authorize(actorOf(request), request.params.id);
      await deleteMembership(db, membership.id);
      const person = await findUserById(db, membership.userId);
      if (person?.currentInstitutionId === membership.institutionId) {
        const next = await nextTwinFor(db, person.id, membership.institutionId);
        await updateUser(db, person.id, { currentInstitutionId: next, voiceAssistantId: null });
      }
      await cache.invalidate({ userId: membership.userId });
      return { success: true as const, message: 'Membership removed' };
    },
  );
}
