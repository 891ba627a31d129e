// Who may do what, in one place: `requireAccess(db, actor, action, target)` is the first line of a
// service. The action is a named thing to do; the target is what its rule needs, rows the service
// has already loaded included (no second read). A refusal throws the spec's answer: another twin's
// object answers as not found (404, never revealing it exists), a visible object the caller may not
// touch 403. `checkAccess` answers whether the same rule would pass (lists deciding row by row).
//
// The grants themselves (which permissions a role holds) are `platform/http/permissions.ts`; the
// current twin's come with the actor, another twin's are read from the membership (access.repo.ts),
// at most once per twin per access context. The actions and what each needs are access.types.ts;
// the rule of each action is rules.ts.
import type { Executor } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { permissionsFor, type Permission } from '../../platform/http/permissions.js';
import { findMembership, twinsGranting } from './access.repo.js';
import type { AccessAction, AccessGrant, AccessQuestions, AccessTarget, Owned, TwinScope } from './access.types.js';
import { isPlainGrant, ruleFor } from './rules.js';

export * from './access.types.js';

/**
 * One caller's access questions within one request: another twin's permissions are read once.
 * `requireAccess` opens one for a single question; a bulk action asks many of one context.
 */
export class AccessContext implements AccessQuestions {
  private readonly held = new Map<string, Promise<Permission[]>>();
  private readonly member = new Map<string, Promise<boolean>>();

  constructor(
    readonly db: Executor,
    readonly actor: Actor,
  ) {}

  /** The permissions the caller holds in a twin: a launch session none beyond its own user rights (behaviour 16). */
  permissionsIn(twinId: string): Promise<Permission[]> {
    let found = this.held.get(twinId);
    if (!found) {
      found = this.readPermissions(twinId);
      this.held.set(twinId, found);
    }
    return found;
  }

  private async readPermissions(twinId: string): Promise<Permission[]> {
    const { actor } = this;
    if (actor.launchScope) return [];
    if (actor.twinId === twinId) return actor.permissions;
    if (isSuper(actor)) return permissionsFor('super', undefined, []);
    const membership = await findMembership(this.db, actor.userId, twinId);
    return permissionsFor(actor.accountType, membership?.role, membership?.permissions ?? []);
  }

  async holds(twinId: string, permission: Permission): Promise<boolean> {
    return (await this.permissionsIn(twinId)).includes(permission);
  }

  /** A member (any role) of the twin? Super admins count as members everywhere. */
  memberOf(twinId: string): Promise<boolean> {
    let found = this.member.get(twinId);
    if (!found) {
      found = this.readMember(twinId);
      this.member.set(twinId, found);
    }
    return found;
  }

  private async readMember(twinId: string): Promise<boolean> {
    const { actor } = this;
    if (actor.launchScope) return actor.launchScope.twinId === twinId;
    if (isSuper(actor) || actor.twinId === twinId) return true;
    return Boolean(await findMembership(this.db, actor.userId, twinId));
  }

  /** Twins where the caller holds `permission`: 'all' for a super admin, none for a launch session. */
  async twins(permission: Permission, withDeleted = false): Promise<TwinScope> {
    if (this.actor.launchScope) return [];
    if (isSuper(this.actor)) return 'all';
    return twinsGranting(this.db, this.actor.userId, permission, withDeleted);
  }

  reaches(twinId: string | null): boolean {
    const { launchScope } = this.actor;
    return !launchScope || launchScope.twinId === twinId;
  }

  owns(row: Owned): boolean {
    return row.userId === this.actor.userId && this.reaches(row.twinId);
  }

  async require<A extends AccessAction>(action: A, target: AccessTarget<A>): Promise<AccessGrant<A>> {
    const rule = ruleFor(action);
    return (await rule(this, target)) as AccessGrant<A>;
  }

  /** Would `require` pass? A refusal (403 or 404) is false; anything else still throws. */
  async check<A extends AccessAction>(action: A, target: AccessTarget<A>): Promise<boolean> {
    // A plain grant is answered without building a refusal (shared files on every turn and listing ask this).
    if (isPlainGrant(action)) return this.holds((target as { twin: string }).twin, action as Permission);
    try {
      await this.require(action, target);
      return true;
    } catch (error) {
      if (error instanceof ForbiddenError || error instanceof NotFoundError) return false;
      throw error;
    }
  }
}

export function requireAccess<A extends AccessAction>(db: Executor, actor: Actor, action: A, target: AccessTarget<A>): Promise<AccessGrant<A>> {
  return new AccessContext(db, actor).require(action, target);
}

export function checkAccess<A extends AccessAction>(db: Executor, actor: Actor, action: A, target: AccessTarget<A>): Promise<boolean> {
  return new AccessContext(db, actor).check(action, target);
}
