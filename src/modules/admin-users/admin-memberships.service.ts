// A twin's administrators set a member's role and extra permission grants, or remove the person from
// the twin. Needs users.edit in that twin; super accounts are for supers only; never one's own.
import { eq } from 'drizzle-orm';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError } from '../../platform/http/errors.js';
import type { Permission } from '../../platform/http/permissions.js';
import { memberships, type MembershipRow } from '../twins/twins.tables.js';
import { deleteMembership, findMembershipById, nextTwinFor } from '../memberships/memberships.repo.js';
import { findUserById, updateUser } from '../users/users.repo.js';
import { requireAccess } from '../access/access.js';
import type { AdminUsersDeps } from './admin-users.service.js';

export const presentMembership = (row: MembershipRow) => ({ _id: row.id, institution: row.twinId, user: row.userId, role: row.role, permissions: row.permissions });

export function createAdminMembershipsService({ db, cache }: Pick<AdminUsersDeps, 'db' | 'cache'>) {
  async function authorize(actor: Actor, id: string): Promise<MembershipRow> {
    const membership = await findMembershipById(db, id);
    const person = membership ? await findUserById(db, membership.userId) : undefined;
    await requireAccess(db, actor, 'membership.edit', { membership, person });
    if (person!.id === actor.userId) throw new BadRequestError('You cannot change or remove your own membership here', 'SELF_ACTION');
    return membership!;
  }

  return {
    async edit(actor: Actor, id: string, change: { role?: 'user' | 'admin'; permissions?: Permission[] }) {
      const membership = await authorize(actor, id);
      const { role, permissions } = change;
      const values = { ...(role ? { role } : {}), ...(permissions ? { permissions: [...new Set(permissions)] } : {}) };
      const [row] = Object.keys(values).length
        ? await db.update(memberships).set(values).where(eq(memberships.id, membership.id)).returning()
        : [membership];
      await cache.invalidate({ userId: membership.userId });
      return presentMembership(row);
    },

    /** When it was the person's current twin they move to their newest other active twin (or none). */
    async remove(actor: Actor, id: string): Promise<void> {
      const membership = await authorize(actor, id);
      await deleteMembership(db, membership.id);
      const person = await findUserById(db, membership.userId);
      if (person?.currentTwinId === membership.twinId) {
        const next = await nextTwinFor(db, person.id, membership.twinId);
        await updateUser(db, person.id, { currentTwinId: next, voiceAssistantId: null });
      }
      await cache.invalidate({ userId: membership.userId });
    },
  };
}

export type AdminMembershipsService = ReturnType<typeof createAdminMembershipsService>;
