// Who may do what, in one place: `requireAccess(db, actor, action, target)` is the first line of a
// service. The action is a named thing to do; the target is what its rule needs, rows the service
// has already loaded included (no second read). A refusal throws the spec's answer: another twin's
// object answers as not found (404, never revealing it exists), a visible object the caller may not
// touch 403. `checkAccess` answers whether the same rule would pass (lists deciding row by row).
//
// The grants themselves (which permissions a role holds) are `platform/http/permissions.ts`; the
// current twin's come with the actor, another twin's are read from the membership (access.repo.ts),
// at most once per twin per access context.
import type { Executor } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { permissionsFor, type Permission } from '../../platform/http/permissions.js';
import { belongsToAny, findMembership, isLiveTwin, twinsGranting } from './access.repo.js';

/** The twins an admin list or bulk action may touch: every twin, or these. */
export type TwinScope = 'all' | string[];

export function inScope(scope: TwinScope, twinId: string | null): boolean {
  if (scope === 'all') return true;
  return twinId !== null && scope.includes(twinId);
}

export const INSTITUTION_NOT_FOUND = 'Institution not found';
export const USER_NOT_FOUND = 'User not found';
export const ASSISTANT_NOT_FOUND = 'Assistant not found!';
export const ASSISTANTS_DISABLED_MESSAGE = 'Assistant creation is turned off for this twin';
export const MEMORY_NOT_FOUND = 'Memory not found';
export const MEMORY_NOT_EDITABLE = 'You may not change this memory';
export const SUPER_ONLY_EDIT = 'Only a super admin can edit a super admin';
export const SUBSCRIPTION_NOT_ADMIN = 'Only an administrator of this Digital Twin may manage its subscription';
export const MEMBERSHIP_NOT_YOURS = 'Invalid Membership. Not yours!';

const notAuthorized = () => new ForbiddenError('Not authorized', 'FORBIDDEN');

interface Owned {
  userId: string;
  twinId: string;
}

export interface AssistantTarget {
  assistant: { userId: string | null; twinId: string | null; status: string; editableOthers: boolean } | undefined;
  /** Behaviour 1's answer for this assistant (assistants/scope.ts), asked only when the rule needs it. */
  pickable: () => Promise<boolean>;
  /** Admin views also reach deleted assistants of the twins whose assistants they manage. */
  includeDeleted?: boolean;
}

export interface AssistantAccess {
  owner: boolean;
  system: boolean;
  pickable: boolean;
  /** Holds assistants.edit on its twin (super for personal and system assistants). */
  manages: boolean;
  canEdit: boolean;
}

export interface AssistantChange {
  moving: boolean;
  status: boolean;
  editableOthers: boolean;
  /** The assistant is the standard one (New Conversation). */
  standard: boolean;
}

interface AccountTarget {
  accountType: string;
  currentTwinId: string | null;
}

/** What each action needs, and (second) what it answers. */
interface Actions {
  /** Twins where the caller holds the grant (live ones; with deleted twins too where asked); none: 403, unless `ifNone: 'empty'`. */
  'twins.managed': [{ permission: Permission; ifNone?: 'forbid' | 'empty'; withDeleted?: boolean }, TwinScope];
  /** The same scope for the history admin views, whose refusal carries no code. */
  'history.admin': [{ permission: Permission }, TwinScope];
  /** Creating and deleting twins: super admins only. */
  'twin.create': [Record<string, never>, void];
  'twin.delete': [Record<string, never>, void];
  /** A twin row by id (institutions.list / institutions.edit there), else 404. */
  'twin.read': [{ twin: { id: string } | undefined }, void];
  'twin.edit': [{ twin: { id: string } | undefined }, void];
  /** Revoking a twin's provider tokens: 404 outside one's twins, 403 "Not authorized" (no code) without institutions.edit. */
  'twin.revoke': [{ twin: { id: string } | undefined }, void];
  /** A twin named in a body: people created into it (users.create), moved to it (users.edit). */
  'user.enrol': [{ twinId: string }, void];
  'user.move': [{ twinId: string }, void];
  /** An account by id: visible where the caller holds users.list in one of its twins (super: all), else 404. */
  'user.read': [{ user: { id: string } | undefined }, void];
  /** Acting on a visible account (behaviour 3): the permission on its current twin; super accounts for supers. */
  'user.edit': [{ user: AccountTarget }, void];
  'user.delete': [{ user: AccountTarget }, void];
  /** Giving an account the super role: super admins only. */
  'user.make-super': [Record<string, never>, void];
  /** Resetting someone's second factor: users.edit on their current twin. */
  'user.reset-factors': [{ user: AccountTarget | undefined }, void];
  /** A membership row (admin): users.list to see it, users.edit to change it; a super admin's, supers only. */
  'membership.edit': [{ membership: { twinId: string } | undefined; person: { accountType: string } | undefined }, void];
  /** A twin's session (admin): sessions.delete there, else 404. */
  'session.delete': [{ session: { twinId: string | null } | undefined }, void];
  /** A vault file: its uploader, or files.access in its twin; anyone else 404. */
  'file.read': [{ file: Owned | undefined }, void];
  /** Changing a vault file: its uploader only (an admin uses the uploads family); anyone else 404. */
  'file.write': [{ file: Owned | undefined }, void];
  /** Sharing a new file with the twin: files.access there. */
  'file.share': [{ twin: string }, void];
  /** A file in the admin uploads family: 404 without any right in its twin, 403 without uploads.delete. */
  'upload.delete': [{ file: { twinId: string } | undefined }, void];
  /** A collection (behaviour 10: its owner or files.access in its twin), else 404. */
  'collection.read': [{ collection: Owned | undefined }, void];
  /** Filing an upload into a collection of the twin it goes to. */
  'collection.use': [{ collection: Owned | undefined; twin: string }, void];
  /** A conversation record's retrieval entries: its owner or histories.list; a member of its twin 403, others 404. */
  'history.read': [{ record: Owned | undefined }, void];
  /** A feedback row within a scope from 'history.admin': a member of its twin 403, others 404. */
  'feedback.read': [{ feedback: { twinId: string } | undefined; scope: TwinScope }, void];
  /** Seeing, editing, deleting one assistant; what the caller may do with it comes back. */
  'assistant.read': [AssistantTarget, AssistantAccess];
  /** With `change`: moving it, its status or editable_others are for its owner and managers; a system assistant stays one, the standard one active. */
  'assistant.edit': [AssistantTarget & { change?: AssistantChange }, AssistantAccess];
  'assistant.delete': [AssistantTarget & { standard: boolean }, AssistantAccess];
  /**
   * An assistant put into a twin (create, move): the caller belongs there, and where the twin turned assistant
   * creation off for its users, manages its assistants; answers whether they manage them.
   */
  'assistant.place': [{ twin: { id: string; disableAssistantsForUser: boolean } | undefined }, boolean];
  /** A custom model or MCP server row (admin, models.edit / mcp.edit): 404 outside one's twins; writes of deployment-wide rows super only. */
  'model.read': [{ model: { twinId: string | null } | undefined }, void];
  'model.write': [{ model: { twinId: string | null } | undefined }, void];
  'model.create': [{ twinId: string | null }, void];
  'mcp.read': [{ server: { twinId: string | null } | undefined }, void];
  'mcp.write': [{ server: { twinId: string | null } | undefined }, void];
  'mcp.create': [{ twinId: string | null }, void];
  /** Free credits: super admins only. */
  'credits.award': [Record<string, never>, void];
  /** Working in a twin: its members (super admins anywhere), else 404. */
  'twin.switch': [{ twin: { id: string } | undefined }, void];
  /** Leaving a twin: one's own membership only. */
  'membership.leave': [{ membership: { userId: string } | undefined }, void];
  /** Signing launch tokens: an administrator of the current twin, outside a launch session. */
  'launch.sign': [Record<string, never>, void];
  /** Uploading to the vault of a twin that turned uploads off for its users: its administrators only. */
  'file.upload': [{ twin: { disableFileUploadForUser: boolean } }, void];
  /** A twin's chat subscription: the current twin (404 without one), administered by the caller. */
  'subscription.manage': [{ twin: { id: string } | undefined }, void];
  /** Creating, changing and deleting entitlements: super admins only. */
  'entitlement.edit': [Record<string, never>, void];
  /** Credits ledger of a twin: credits.edit there, else 404. */
  'credits.read': [{ twinId: string }, void];
  /** Managing a twin's shared memory: super admins (outside a launch session) and holders of institutions.edit. */
  'memory.manage': [{ twin: string }, void];
  /** A memory row of the working twin: shared or one's own to see (else 404); one's own, or shared and managed, to change (else 403). Answers whether the caller manages the twin. */
  'memory.read': [{ memory: { userId: string; shared: boolean; twinId: string } | undefined }, { manages: boolean }];
  'memory.edit': [{ memory: { userId: string; shared: boolean; twinId: string } | undefined }, { manages: boolean }];
}

/** A grant held in one twin (403 "Not authorized" without it), or one of the named actions above. */
export type AccessAction = Permission | keyof Actions;
export type AccessTarget<A extends AccessAction> = A extends keyof Actions ? Actions[A][0] : { twin: string };
export type AccessGrant<A extends AccessAction> = A extends keyof Actions ? Actions[A][1] : void;

/**
 * One caller's access questions within one request: another twin's permissions are read once.
 * `requireAccess` opens one for a single question; a bulk action asks many of one context.
 */
export class AccessContext {
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

  async require<A extends AccessAction>(action: A, target: AccessTarget<A>): Promise<AccessGrant<A>> {
    const rule = Object.hasOwn(RULES, action) ? (RULES as unknown as Record<string, Rule>)[action] : grantRule(action as Permission);
    return (await rule(this, target)) as AccessGrant<A>;
  }

  /** Would `require` pass? A refusal (403 or 404) is false; anything else still throws. */
  async check<A extends AccessAction>(action: A, target: AccessTarget<A>): Promise<boolean> {
    // A plain grant is answered without building a refusal (shared files on every turn and listing ask this).
    if (!Object.hasOwn(RULES, action)) return this.holds((target as { twin: string }).twin, action as Permission);
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

// ---- the rules -------------------------------------------------------------------------------

type Rule = (access: AccessContext, target: unknown) => Promise<unknown>;
type Rules = { [A in keyof Actions]: (access: AccessContext, target: Actions[A][0]) => Promise<Actions[A][1]> };

function grantRule(permission: Permission): Rule {
  return async (access, target) => {
    if (!(await access.holds((target as { twin: string }).twin, permission))) throw notAuthorized();
  };
}

async function managedScope(access: AccessContext, permission: Permission, withDeleted = false, ifNone: 'forbid' | 'empty' = 'forbid') {
  const scope = await access.twins(permission, withDeleted);
  if (ifNone === 'forbid' && scope !== 'all' && scope.length === 0) throw notAuthorized();
  return scope;
}

/** A twin named in a body: unknown, or not the caller's, 404; the caller's without the permission 403. */
async function namedTwin(access: AccessContext, twinId: string, permission: Permission): Promise<void> {
  if (!(await isLiveTwin(access.db, twinId))) throw new NotFoundError(INSTITUTION_NOT_FOUND);
  if (await access.holds(twinId, permission)) return;
  if (await access.memberOf(twinId)) throw notAuthorized();
  throw new NotFoundError(INSTITUTION_NOT_FOUND);
}

/** Behaviour 3: the permission on the account's current twin (the caller's own when it has none); super accounts for supers. */
async function onAccount(access: AccessContext, user: AccountTarget, permission: Permission): Promise<void> {
  if (isSuper(access.actor)) return;
  if (user.accountType === 'super') throw new ForbiddenError(SUPER_ONLY_EDIT, 'SUPER_ONLY');
  const twin = user.currentTwinId ?? access.actor.twinId;
  if (!twin || !(await access.holds(twin, permission))) throw notAuthorized();
}

/** Permission on an assistant's twin; personal and system assistants: super admins only. */
async function holdsOnAssistant(access: AccessContext, twinId: string | null, permission: Permission): Promise<boolean> {
  if (!twinId) return isSuper(access.actor) && !access.actor.launchScope;
  return access.holds(twinId, permission);
}

async function assistantAccess(access: AccessContext, target: AssistantTarget): Promise<AssistantAccess> {
  const row = target.assistant;
  const notFound = () => new NotFoundError(ASSISTANT_NOT_FOUND, 'ASSISTANT_NOT_FOUND');
  if (!row) throw notFound();
  const system = !row.userId && !row.twinId;
  // An owner who left the assistant's twin no longer reaches it through ownership.
  const owner = row.userId === access.actor.userId && (!row.twinId || (await access.memberOf(row.twinId)));
  const manages = await holdsOnAssistant(access, row.twinId, 'assistants.edit');
  if (row.status === 'deleted' && !(target.includeDeleted && manages)) throw notFound();
  const pickable = await target.pickable();
  const lists = manages || (await holdsOnAssistant(access, row.twinId, 'assistants.list'));
  if (!pickable && !owner && !lists) throw notFound();
  const canEdit = system ? manages : owner || manages || (row.editableOthers && pickable);
  return { owner, system, pickable, manages, canEdit };
}

/** A custom model or MCP server as an admin may reach it (models.edit / mcp.edit). */
async function adminRow(
  access: AccessContext,
  row: { twinId: string | null } | undefined,
  permission: Permission,
  notFound: () => Error,
  superOnly?: string,
): Promise<void> {
  const scope = await access.twins(permission);
  const visible = row && (row.twinId ? inScope(scope, row.twinId) : scope === 'all' || scope.length > 0);
  if (!row || !visible) throw notFound();
  if (superOnly && !row.twinId && !isSuper(access.actor)) throw new ForbiddenError(superOnly, 'FORBIDDEN');
}

async function adminCreate(access: AccessContext, twinId: string | null, permission: Permission, superOnly: string): Promise<void> {
  if (twinId === null) {
    if (!isSuper(access.actor) || access.actor.launchScope) throw new ForbiddenError(superOnly, 'FORBIDDEN');
    return;
  }
  if (!inScope(await access.twins(permission), twinId)) throw notAuthorized();
}

const modelNotFound = () => new NotFoundError('AI model not found', 'MODEL_NOT_FOUND');
const serverNotFound = () => new NotFoundError('MCP server not found', 'MCP_SERVER_NOT_FOUND');

const RULES: Rules = {
  'twins.managed': (access, { permission, ifNone, withDeleted }) => managedScope(access, permission, withDeleted, ifNone),

  async 'history.admin'(access, { permission }) {
    const scope = await access.twins(permission);
    if (scope !== 'all' && scope.length === 0) throw new ForbiddenError();
    return scope;
  },

  async 'twin.create'(access) {
    if (!isSuper(access.actor)) throw new ForbiddenError('Only a super admin can create a Digital Twin', 'SUPER_ONLY');
  },

  async 'twin.delete'(access) {
    if (!isSuper(access.actor)) throw new ForbiddenError('Only a super admin can delete a Digital Twin', 'SUPER_ONLY');
  },

  async 'twin.read'(access, { twin }) {
    if (!twin || !(await access.holds(twin.id, 'institutions.list'))) throw new NotFoundError(INSTITUTION_NOT_FOUND);
  },

  async 'twin.edit'(access, { twin }) {
    if (!twin || !(await access.holds(twin.id, 'institutions.edit'))) throw new NotFoundError(INSTITUTION_NOT_FOUND);
  },

  async 'twin.revoke'(access, { twin }) {
    // A twin the caller does not belong to is not shown (404), as everywhere else.
    if (!twin || !(await access.memberOf(twin.id))) throw new NotFoundError(INSTITUTION_NOT_FOUND);
    if (!(await access.holds(twin.id, 'institutions.edit'))) throw new ForbiddenError('Not authorized');
  },

  'user.enrol': (access, { twinId }) => namedTwin(access, twinId, 'users.create'),
  'user.move': (access, { twinId }) => namedTwin(access, twinId, 'users.edit'),

  async 'user.read'(access, { user }) {
    if (!user) throw new NotFoundError(USER_NOT_FOUND);
    if (isSuper(access.actor)) return;
    const scope = await access.twins('users.list', true);
    if (!(await belongsToAny(access.db, user.id, scope))) throw new NotFoundError(USER_NOT_FOUND);
  },

  'user.edit': (access, { user }) => onAccount(access, user, 'users.edit'),
  'user.delete': (access, { user }) => onAccount(access, user, 'users.delete'),

  async 'user.make-super'(access) {
    if (!isSuper(access.actor)) throw new ForbiddenError('Only a super admin can assign the super role', 'SUPER_ONLY');
  },

  async 'user.reset-factors'(access, { user }) {
    if (!user) throw new NotFoundError(USER_NOT_FOUND);
    const twin = user.currentTwinId ?? access.actor.twinId;
    if (!twin || !(await access.holds(twin, 'users.edit'))) {
      // An account of a twin the caller does not belong to is not shown (404); a member lacking the right gets 403.
      if (!twin || !(await access.memberOf(twin))) throw new NotFoundError(USER_NOT_FOUND);
      throw new ForbiddenError();
    }
    if (user.accountType === 'super' && !isSuper(access.actor)) throw new ForbiddenError(SUPER_ONLY_EDIT);
  },

  async 'membership.edit'(access, { membership, person }) {
    const notFound = () => new NotFoundError('Membership not found');
    if (!membership || !(await access.holds(membership.twinId, 'users.list'))) throw notFound();
    if (!(await access.holds(membership.twinId, 'users.edit'))) throw notAuthorized();
    if (!person) throw notFound();
    if (person.accountType === 'super' && !isSuper(access.actor)) throw new ForbiddenError(SUPER_ONLY_EDIT, 'SUPER_ONLY');
  },

  async 'session.delete'(access, { session }) {
    if (!session?.twinId || !(await access.holds(session.twinId, 'sessions.delete'))) {
      throw new NotFoundError('Session not found');
    }
  },

  async 'file.read'(access, { file }) {
    if (!file || (file.userId !== access.actor.userId && !(await access.holds(file.twinId, 'files.access')))) {
      throw new NotFoundError('File not found');
    }
  },

  async 'file.write'(access, { file }) {
    if (!file || file.userId !== access.actor.userId) throw new NotFoundError('File not found');
  },

  async 'file.share'(access, { twin }) {
    if (!(await access.holds(twin, 'files.access'))) {
      throw new ForbiddenError('Sharing a file with the twin needs the files.access permission', 'FORBIDDEN');
    }
  },

  async 'upload.delete'(access, { file }) {
    const permissions = file ? await access.permissionsIn(file.twinId) : [];
    if (!file || permissions.length === 0) throw new NotFoundError('File not found');
    if (!permissions.includes('uploads.delete')) throw notAuthorized();
  },

  async 'collection.read'(access, { collection }) {
    const allowed =
      collection && (collection.userId === access.actor.userId || (await access.holds(collection.twinId, 'files.access')));
    if (!allowed) throw new NotFoundError('Collection not found');
  },

  async 'collection.use'(access, { collection, twin }) {
    const usable =
      collection &&
      collection.twinId === twin &&
      (collection.userId === access.actor.userId || (await access.holds(twin, 'files.access')));
    if (!usable) throw new NotFoundError('Collection not found');
  },

  async 'history.read'(access, { record }) {
    const notFound = () => new NotFoundError('History not found');
    if (!record) throw notFound();
    if (record.userId === access.actor.userId) return;
    if (await access.holds(record.twinId, 'histories.list')) return;
    // A member of the record's twin learns only that they may not; anyone else learns nothing.
    if (await access.memberOf(record.twinId)) throw new ForbiddenError();
    throw notFound();
  },

  async 'feedback.read'(access, { feedback, scope }) {
    if (!feedback) throw new NotFoundError('Feedback not found');
    if (inScope(scope, feedback.twinId)) return;
    if (await access.memberOf(feedback.twinId)) throw new ForbiddenError();
    throw new NotFoundError('Feedback not found');
  },

  'assistant.read': (access, target) => assistantAccess(access, target),

  async 'assistant.edit'(access, target) {
    const granted = await assistantAccess(access, target);
    if (!granted.canEdit) throw new ForbiddenError('You are not allowed to edit this assistant', 'ASSISTANT_NOT_EDITABLE');
    const change = target.change;
    if (!change) return granted;
    if ((change.moving || change.status || change.editableOthers) && !(granted.owner || granted.manages)) {
      throw new ForbiddenError(
        "Only the owner or the twin's assistant editors may move this assistant or change its status or editable_others",
        'ASSISTANT_OWNER_ONLY',
      );
    }
    if (granted.system && (change.moving || (change.status && change.standard))) {
      throw new ForbiddenError('A system assistant stays a system assistant, and the standard one stays active', 'SYSTEM_ASSISTANT');
    }
    return granted;
  },

  async 'assistant.delete'(access, target) {
    const granted = await assistantAccess(access, target);
    if (target.standard) throw new ForbiddenError('The standard assistant cannot be deleted', 'SYSTEM_ASSISTANT');
    const allowed = granted.owner || (await holdsOnAssistant(access, target.assistant!.twinId, 'assistants.delete'));
    if (!allowed) throw new ForbiddenError('You are not allowed to delete this assistant', 'ASSISTANT_NOT_DELETABLE');
    return granted;
  },

  async 'assistant.place'(access, { twin }) {
    if (!twin || !(await access.memberOf(twin.id))) throw new NotFoundError(INSTITUTION_NOT_FOUND, 'INSTITUTION_NOT_FOUND');
    const manages = await access.holds(twin.id, 'assistants.edit');
    if (twin.disableAssistantsForUser && !manages) throw new ForbiddenError(ASSISTANTS_DISABLED_MESSAGE, 'ASSISTANTS_DISABLED');
    return manages;
  },

  'model.read': (access, { model }) => adminRow(access, model, 'models.edit', modelNotFound),
  'model.write': (access, { model }) => adminRow(access, model, 'models.edit', modelNotFound, 'Only a super admin can change a deployment-wide model'),
  'model.create': (access, { twinId }) => adminCreate(access, twinId, 'models.edit', 'Only a super admin can add a deployment-wide model'),
  'mcp.read': (access, { server }) => adminRow(access, server, 'mcp.edit', serverNotFound),
  'mcp.write': (access, { server }) => adminRow(access, server, 'mcp.edit', serverNotFound, 'Only a super admin can change an MCP server of every twin'),
  'mcp.create': (access, { twinId }) => adminCreate(access, twinId, 'mcp.edit', 'Only a super admin can add an MCP server of every twin'),

  async 'twin.switch'(access, { twin }) {
    const member = twin && (isSuper(access.actor) || (await findMembership(access.db, access.actor.userId, twin.id)));
    if (!member) throw new NotFoundError(INSTITUTION_NOT_FOUND);
  },

  async 'membership.leave'(access, { membership }) {
    if (!membership) throw new NotFoundError('Not Found');
    if (membership.userId !== access.actor.userId) throw new ForbiddenError(MEMBERSHIP_NOT_YOURS, 'NOT_YOURS');
  },

  async 'launch.sign'({ actor }) {
    if (!actor.twinId || actor.launchScope || (actor.role !== 'admin' && !isSuper(actor))) {
      throw new ForbiddenError('Only an administrator of the current twin can sign launch tokens', 'NOT_TWIN_ADMIN');
    }
  },

  async 'file.upload'({ actor }, { twin }) {
    const administers = !actor.launchScope && (isSuper(actor) || actor.role === 'admin');
    if (twin.disableFileUploadForUser && !administers) {
      throw new ForbiddenError('File uploads are turned off for users of this Digital Twin', 'FILE_UPLOAD_DISABLED');
    }
  },

  async 'subscription.manage'({ actor }, { twin }) {
    if (!twin) throw new NotFoundError(INSTITUTION_NOT_FOUND);
    if (actor.launchScope || (!isSuper(actor) && actor.role !== 'admin')) {
      throw new ForbiddenError(SUBSCRIPTION_NOT_ADMIN, 'NOT_TWIN_ADMIN');
    }
  },

  async 'entitlement.edit'({ actor }) {
    if (!isSuper(actor)) throw new ForbiddenError('Only a super admin can change entitlements', 'SUPER_ONLY');
  },

  async 'credits.award'(access) {
    if (!isSuper(access.actor)) throw new ForbiddenError('Only a super admin can award free credits', 'SUPER_ONLY');
  },

  async 'credits.read'(access, { twinId }) {
    if (!(await access.holds(twinId, 'credits.edit')) || !(await isLiveTwin(access.db, twinId))) {
      throw new NotFoundError(INSTITUTION_NOT_FOUND);
    }
  },

  async 'memory.read'(access, { memory }) {
    if (!memory || (!memory.shared && memory.userId !== access.actor.userId)) throw new NotFoundError(MEMORY_NOT_FOUND);
    return { manages: await access.check('memory.manage', { twin: memory.twinId }) };
  },

  async 'memory.edit'(access, { memory }) {
    const { manages } = await access.require('memory.read', { memory });
    const editable = memory!.userId === access.actor.userId || (memory!.shared && manages);
    if (!editable) throw new ForbiddenError(MEMORY_NOT_EDITABLE, 'MEMORY_NOT_EDITABLE');
    return { manages };
  },

  async 'memory.manage'(access, { twin }) {
    if (isSuper(access.actor) && !access.actor.launchScope) return;
    if (!(await access.holds(twin, 'institutions.edit'))) throw notAuthorized();
  },
};
