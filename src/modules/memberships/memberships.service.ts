// A person's memberships: list them, switch the twin they work in (clearing the voice assistant chosen
// under the previous one, behaviour 1), leave one (switching to another when it was current), and join a
// twin that allows it. Each change drops the person's cached sessions so it bites at once.
import type { Database } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { MEMBERSHIP_NOT_YOURS, requireAccess } from '../access/access.js';
import type { SessionCache } from '../auth/session-cache.js';
import { findInstitutionById, findInstitutionByPublicId, findMembership } from '../institutions/institutions.repo.js';
import { assertInstitutionUsable } from '../institutions/institutions.service.js';
import type { InstitutionRow } from '../institutions/institutions.tables.js';
import { permissionsFor } from '../../platform/http/permissions.js';
import type { ProfileService } from '../users/profile.service.js';
import { findUserById, updateUser } from '../users/users.repo.js';
import { deleteMembership, ensureMembership, findMembershipById, listMembershipsWithTwins, nextTwinFor } from './memberships.repo.js';

export const NOT_YOURS = MEMBERSHIP_NOT_YOURS;

export interface MembershipsDeps {
  db: Database;
  cache: Pick<SessionCache, 'invalidate'>;
  profiles: ProfileService;
}

function refuseLaunchScope(actor: Actor): void {
  if (actor.launchScope) {
    throw new ForbiddenError('Confirm with a code to leave this Digital Twin', 'LAUNCH_SCOPE_STEP_UP', { institutionId: actor.launchScope.institutionId });
  }
}

export function createMembershipsService({ db, cache, profiles }: MembershipsDeps) {
  /** Makes `institutionId` the person's current twin; a change of twin clears the chosen voice assistant. */
  async function workIn(userId: string, institutionId: string | null): Promise<void> {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFoundError('User not found');
    if (user.currentInstitutionId !== institutionId) {
      await updateUser(db, userId, { currentInstitutionId: institutionId, voiceAssistantId: null });
    }
    await cache.invalidate({ userId });
  }

  return {
    async list(actor: Actor) {
      const rows = await listMembershipsWithTwins(db, actor.userId);
      return rows.map((row) => ({
        _id: row.id,
        institution: { _id: row.institution.id, name: row.institution.name, ainame: row.institution.ainame, picture: row.institution.picture, status: row.institution.status },
        role: row.role,
        permissions: permissionsFor(actor.accountType, row.role, row.permissions),
        current: row.institution.id === actor.institutionId,
      }));
    },

    async switchTo(actor: Actor, institutionId: string) {
      refuseLaunchScope(actor);
      const twin = await findInstitutionById(db, institutionId);
      await requireAccess(db, actor, 'twin.switch', { twin });
      if (!isSuper(actor)) assertInstitutionUsable(twin!);
      await workIn(actor.userId, institutionId);
      return profiles.load(actor.userId);
    },

    async leave(actor: Actor, membershipId: string): Promise<string> {
      const found = await findMembershipById(db, membershipId);
      await requireAccess(db, actor, 'membership.leave', { membership: found });
      const membership = found!;
      refuseLaunchScope(actor);
      await deleteMembership(db, membership.id);
      const user = await findUserById(db, actor.userId);
      if (user?.currentInstitutionId === membership.institutionId) {
        await workIn(actor.userId, await nextTwinFor(db, actor.userId, membership.institutionId));
      } else {
        await cache.invalidate({ userId: actor.userId });
      }
      const twin = await findInstitutionById(db, membership.institutionId);
      return twin ? `You left ${twin.name}` : 'Membership removed';
    },

    async join(actor: Actor, target: { institutionId?: string; publicId?: string }) {
      refuseLaunchScope(actor);
      const twin: InstitutionRow | undefined = target.institutionId
        ? await findInstitutionById(db, target.institutionId)
        : await findInstitutionByPublicId(db, target.publicId!);
      if (!twin) throw new NotFoundError('Institution not found');
      const already = await findMembership(db, actor.userId, twin.id);
      if (!already) {
        if (twin.allowJoining !== 'open') throw new ForbiddenError('This Digital Twin does not allow joining', 'JOINING_CLOSED');
        if (twin.joiningAdminOnly && actor.accountType === 'user') {
          throw new ForbiddenError('Only administrators may join this Digital Twin', 'JOINING_ADMIN_ONLY');
        }
      }
      assertInstitutionUsable(twin);
      if (!already) await ensureMembership(db, twin.id, actor.userId, 'user');
      await workIn(actor.userId, twin.id);
      return profiles.load(actor.userId);
    },
  };
}

export type MembershipsService = ReturnType<typeof createMembershipsService>;
