// A person's memberships: list them, switch the twin they work in (clearing the voice assistant chosen
// under the previous one, behaviour 1), leave one (switching to another when it was current), and join a
// twin that allows it. Each change drops the person's cached sessions so it bites at once.
import type { Database } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { MEMBERSHIP_NOT_YOURS, requireAccess } from '../access/access.js';
import type { SessionCache } from '../auth/session-cache.js';
import { findTwinById, findTwinByPublicId, findMembership } from '../twins/twins.repo.js';
import { assertTwinUsable } from '../twins/twins.service.js';
import type { TwinRow } from '../twins/twins.tables.js';
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
    throw new ForbiddenError('Confirm with a code to leave this Digital Twin', 'LAUNCH_SCOPE_STEP_UP', { institutionId: actor.launchScope.twinId });
  }
}

export function createMembershipsService({ db, cache, profiles }: MembershipsDeps) {
  /** Makes `twinId` the person's current twin; a change of twin clears the chosen voice assistant. */
  async function workIn(userId: string, twinId: string | null): Promise<void> {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFoundError('User not found');
    if (user.currentTwinId !== twinId) {
      await updateUser(db, userId, { currentTwinId: twinId, voiceAssistantId: null });
    }
    await cache.invalidate({ userId });
  }

  return {
    async list(actor: Actor) {
      const rows = await listMembershipsWithTwins(db, actor.userId);
      return rows.map((row) => ({
        _id: row.id,
        institution: { _id: row.twin.id, name: row.twin.name, ainame: row.twin.ainame, picture: row.twin.picture, status: row.twin.status },
        role: row.role,
        permissions: permissionsFor(actor.accountType, row.role, row.permissions),
        current: row.twin.id === actor.twinId,
      }));
    },

    async switchTo(actor: Actor, twinId: string) {
      refuseLaunchScope(actor);
      const twin = await findTwinById(db, twinId);
      await requireAccess(db, actor, 'twin.switch', { twin });
      if (!isSuper(actor)) assertTwinUsable(twin!);
      await workIn(actor.userId, twinId);
      return profiles.load(actor.userId);
    },

    async leave(actor: Actor, membershipId: string): Promise<string> {
      const found = await findMembershipById(db, membershipId);
      await requireAccess(db, actor, 'membership.leave', { membership: found });
      const membership = found!;
      refuseLaunchScope(actor);
      await deleteMembership(db, membership.id);
      const user = await findUserById(db, actor.userId);
      if (user?.currentTwinId === membership.twinId) {
        await workIn(actor.userId, await nextTwinFor(db, actor.userId, membership.twinId));
      } else {
        await cache.invalidate({ userId: actor.userId });
      }
      const twin = await findTwinById(db, membership.twinId);
      return twin ? `You left ${twin.name}` : 'Membership removed';
    },

    async join(actor: Actor, target: { twinId?: string; publicId?: string }) {
      refuseLaunchScope(actor);
      const twin: TwinRow | undefined = target.twinId
        ? await findTwinById(db, target.twinId)
        : await findTwinByPublicId(db, target.publicId!);
      if (!twin) throw new NotFoundError('Institution not found');
      const already = await findMembership(db, actor.userId, twin.id);
      if (!already) {
        if (twin.allowJoining !== 'open') throw new ForbiddenError('This Digital Twin does not allow joining', 'JOINING_CLOSED');
        if (twin.joiningAdminOnly && actor.accountType === 'user') {
          throw new ForbiddenError('Only administrators may join this Digital Twin', 'JOINING_ADMIN_ONLY');
        }
      }
      assertTwinUsable(twin);
      if (!already) await ensureMembership(db, twin.id, actor.userId, 'user');
      await workIn(actor.userId, twin.id);
      return profiles.load(actor.userId);
    },
  };
}

export type MembershipsService = ReturnType<typeof createMembershipsService>;
