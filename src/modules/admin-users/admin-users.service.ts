// Account administration: list, edit (the spec's table and behaviour 3), soft delete and bulk status
// (behaviour 13). Every change to a person's rights or status drops their cached sessions at once;
// deactivating or deleting also revokes their sessions.
import type { Database, DatabaseHandle, Executor } from '../../platform/db/client.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { BadRequestError, ConflictError } from '../../platform/http/errors.js';
import type { SessionCache } from '../auth/session-cache.js';
import { hashPassword } from '../../platform/crypto/passwords.js';
import { applySecurityChange } from '../auth/security-effects.js';
import { revokeUserSessions } from '../auth/sessions.repo.js';
import { setUserCredits } from '../credits/credits.service.js';
import type { Permission } from '../../platform/http/permissions.js';
import { findUserByEmail, findUserById, updateUser, type NewUser } from '../users/users.repo.js';
import { AccessContext, requireAccess, type TwinScope } from '../access/access.js';
import { presentAdminUser } from './admin-users.presenter.js';
import { ensureMembership } from '../memberships/memberships.repo.js';
import { findAnyUser, findLiveUsers, listUsers, membershipsOf, setStatus, softDeleteUsers } from './admin-users.repo.js';
import type { AdminUserWire, EditUserInput } from './admin-users.schemas.js';
import type { UserStatus } from '../users/users.tables.js';

export interface AdminUsersDeps {
  db: Database;
  cache: Pick<SessionCache, 'invalidate'>;
  /** Credits a new account starts with (STARTING_CREDITS). */
  startingCredits: number;
  /** The database, for the embedded one's planner statistics after a large import. */
  database?: Pick<DatabaseHandle, 'kind' | 'executeSql'>;
}

export const EMAIL_TAKEN = 'This email is already used by another account';

/** Twins whose people the caller may see ('all' for a super admin); memberships elsewhere are not shown. */
const visibleScope = (db: Executor, actor: Actor): Promise<TwinScope> =>
  requireAccess(db, actor, 'twins.managed', { permission: 'users.list', ifNone: 'empty', withDeleted: true });

export function createAdminUsersService({ db, cache }: AdminUsersDeps) {
  async function present(db: Executor, actor: Actor, userId: string): Promise<AdminUserWire> {
    const user = (await findAnyUser(db, userId))!;
    return presentAdminUser(user, await membershipsOf(db, [user.id], await visibleScope(db, actor)));
  }

  /** Drops cached sessions, and revokes them all when the person may no longer sign in. */
  async function afterChange(userIds: string[], revoke: boolean): Promise<void> {
    for (const userId of userIds) {
      if (revoke) await revokeUserSessions(db, userId);
      await cache.invalidate({ userId });
    }
  }

  return {
    present,

    async list(actor: Actor, query: { page: number; limit: number; search?: string; institution?: string; status?: UserStatus }) {
      const scope = await visibleScope(db, actor);
      if (query.institution && scope !== 'all' && !scope.includes(query.institution)) {
        return { success: true as const, data: [], page: query.page, limit: query.limit, total: 0 };
      }
      const { rows, total } = await listUsers(
        db,
        { scope, search: query.search, twinId: query.institution, status: query.status },
        { offset: (query.page - 1) * query.limit, limit: query.limit },
      );
      const memberships = await membershipsOf(db, rows.map((row) => row.id), scope);
      return { success: true as const, data: rows.map((row) => presentAdminUser(row, memberships)), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, userId: string): Promise<AdminUserWire> {
      await requireAccess(db, actor, 'user.read', { user: await findUserById(db, userId) });
      return present(db, actor, userId);
    },

    /** PUT /api/admin/user/{userId}: the spec's edit table. */
    async edit(actor: Actor, userId: string, input: EditUserInput): Promise<{ data: AdminUserWire; ignoredFields: string[] }> {
      const found = await findUserById(db, userId);
      await requireAccess(db, actor, 'user.read', { user: found });
      const target = found!;
      const deleting = input.status === 'deleted';
      await requireAccess(db, actor, deleting ? 'user.delete' : 'user.edit', { user: target });
      if (input.accountType === 'super') await requireAccess(db, actor, 'user.make-super', {});
      if (target.id === actor.userId && (deleting || input.status === 'inactive')) {
        throw new BadRequestError('You cannot deactivate or delete your own account', 'SELF_ACTION');
      }
      const ignoredFields: string[] = [];
      // Where the account works afterwards: undefined = unchanged, null = no current twin.
      let moveTo: string | null | undefined;
      if (input.institution !== undefined && input.plan !== 'sdk') ignoredFields.push('institution');
      if (input.plan === 'sdk' && input.institution) {
        if (input.institution !== target.currentTwinId) await requireAccess(db, actor, 'user.move', { twinId: input.institution });
        moveTo = input.institution;
      } else if (input.plan && input.plan !== 'sdk') {
        moveTo = null;
      }

      const values: Partial<NewUser> = {};
      if (input.email !== undefined) values.email = input.email.toLowerCase();
      if (input.fname !== undefined) values.fname = input.fname;
      if (input.lname !== undefined) values.lname = input.lname;
      if (input.accountType !== undefined) values.accountType = input.accountType;
      if (input.plan !== undefined) values.plan = input.plan;
      if (moveTo !== undefined) {
        values.currentTwinId = moveTo;
        if (moveTo !== target.currentTwinId) values.voiceAssistantId = null;
      }
      if (deleting) Object.assign(values, { status: 'deleted', deletedAt: new Date() });
      else if (input.status !== undefined) values.status = input.status;

      try {
        await db.transaction(async (tx) => {
          if (values.email && values.email !== target.email.toLowerCase()) {
            const holder = await findUserByEmail(tx, values.email);
            if (holder && holder.id !== target.id) throw new ConflictError(EMAIL_TAKEN, 'EMAIL_TAKEN');
          }
          if (moveTo) await ensureMembership(tx, moveTo, target.id, 'user');
          if (Object.keys(values).length > 0) await updateUser(tx, target.id, values);
          if (input.credits !== undefined) {
            await setUserCredits(tx, { userId: target.id, credits: input.credits, twinId: target.currentTwinId, actorId: actor.userId });
          }
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new ConflictError(EMAIL_TAKEN, 'EMAIL_TAKEN');
        throw error;
      }

      if (deleting || input.status === 'inactive') await revokeUserSessions(db, target.id);
      // Password and two-step changes have their effects (session revocation, factor reset) in one place.
      await applySecurityChange(db, cache, target.id, {
        password: input.password,
        mfaEnabled: input.mfaEnabled,
        mustChangePassword: input.mustChangePassword,
        keepSessionId: target.id === actor.userId ? actor.sessionId : undefined,
      });
      return { data: await present(db, actor, target.id), ignoredFields };
    },

    /** DELETE /api/admin/user/{userId}: soft delete, the email is freed. */
    async remove(actor: Actor, userId: string): Promise<void> {
      const found = await findUserById(db, userId);
      await requireAccess(db, actor, 'user.read', { user: found });
      const target = found!;
      await requireAccess(db, actor, 'user.delete', { user: target });
      if (target.id === actor.userId) throw new BadRequestError('You cannot deactivate or delete your own account', 'SELF_ACTION');
      await softDeleteUsers(db, [target.id]);
      await afterChange([target.id], true);
    },

    /** Behaviour 13: rows the caller may not act on are left alone; the answer counts the changed rows. */
    async bulk(actor: Actor, action: 'activate' | 'deactivate' | 'delete', ids: string[]): Promise<number> {
      const permission: Permission = action === 'delete' ? 'users.delete' : 'users.edit';
      const access = new AccessContext(db, actor);
      await access.require('twins.managed', { permission });
      const scope = await visibleScope(db, actor);
      const unique = [...new Set(ids)];
      const targets = await findLiveUsers(db, unique);
      const visible = new Set((await membershipsOf(db, unique, scope)).map((m) => m.userId));
      const actionable: string[] = [];
      for (const target of targets) {
        if (target.id === actor.userId) continue;
        if (!isSuper(actor) && !visible.has(target.id)) continue;
        if (!(await access.check(action === 'delete' ? 'user.delete' : 'user.edit', { user: target }))) continue;
        actionable.push(target.id);
      }
      const changed =
        action === 'delete' ? await softDeleteUsers(db, actionable) : await setStatus(db, actionable, action === 'activate' ? 'active' : 'inactive');
      await afterChange(changed, action !== 'activate');
      return changed.length;
    },
  };
}

export type AdminUsersService = ReturnType<typeof createAdminUsersService>;
