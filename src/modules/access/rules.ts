// The rule of each access action (access.types.ts names them): who passes, and what a refusal
// answers. A rule asks its questions of the caller's AccessQuestions, so a twin's grants are read once.
import { isSuper } from '../../platform/http/actor.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import type { Permission } from '../../platform/http/permissions.js';
import { belongsToAny, findMembership, isLiveTwin } from './access.repo.js';
import {
  ASSISTANT_NOT_FOUND,
  INSTITUTION_NOT_FOUND,
  MEMBERSHIP_NOT_YOURS,
  MEMORY_NOT_EDITABLE,
  MEMORY_NOT_FOUND,
  SUBSCRIPTION_NOT_ADMIN,
  SUPER_ONLY_EDIT,
  USER_NOT_FOUND,
  ASSISTANTS_DISABLED_MESSAGE,
  inScope,
  type AccessQuestions,
  type AccountTarget,
  type Actions,
  type AssistantAccess,
  type AssistantTarget,
} from './access.types.js';

const notAuthorized = () => new ForbiddenError('Not authorized', 'FORBIDDEN');

type Rule = (access: AccessQuestions, target: unknown) => Promise<unknown>;
type Rules = { [A in keyof Actions]: (access: AccessQuestions, target: Actions[A][0]) => Promise<Actions[A][1]> };

function grantRule(permission: Permission): Rule {
  return async (access, target) => {
    if (!(await access.holds((target as { twin: string }).twin, permission))) throw notAuthorized();
  };
}

async function managedScope(access: AccessQuestions, permission: Permission, withDeleted = false, ifNone: 'forbid' | 'empty' = 'forbid') {
  const scope = await access.twins(permission, withDeleted);
  if (ifNone === 'forbid' && scope !== 'all' && scope.length === 0) throw notAuthorized();
  return scope;
}

/** A twin named in a body: unknown, or not the caller's, 404; the caller's without the permission 403. */
async function namedTwin(access: AccessQuestions, twinId: string, permission: Permission): Promise<void> {
  if (!(await isLiveTwin(access.db, twinId))) throw new NotFoundError(INSTITUTION_NOT_FOUND);
  if (await access.holds(twinId, permission)) return;
  if (await access.memberOf(twinId)) throw notAuthorized();
  throw new NotFoundError(INSTITUTION_NOT_FOUND);
}

/** Behaviour 3: the permission on the account's current twin (the caller's own when it has none); super accounts for supers. */
async function onAccount(access: AccessQuestions, user: AccountTarget, permission: Permission): Promise<void> {
  if (isSuper(access.actor)) return;
  if (user.accountType === 'super') throw new ForbiddenError(SUPER_ONLY_EDIT, 'SUPER_ONLY');
  const twin = user.currentTwinId ?? access.actor.twinId;
  if (!twin || !(await access.holds(twin, permission))) throw notAuthorized();
}

/** Permission on an assistant's twin; personal and system assistants: super admins only. */
async function holdsOnAssistant(access: AccessQuestions, twinId: string | null, permission: Permission): Promise<boolean> {
  if (!twinId) return isSuper(access.actor) && !access.actor.launchScope;
  return access.holds(twinId, permission);
}

async function assistantAccess(access: AccessQuestions, target: AssistantTarget): Promise<AssistantAccess> {
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
  access: AccessQuestions,
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

async function adminCreate(access: AccessQuestions, twinId: string | null, permission: Permission, superOnly: string): Promise<void> {
  if (twinId === null) {
    if (!isSuper(access.actor) || access.actor.launchScope) throw new ForbiddenError(superOnly, 'FORBIDDEN');
    return;
  }
  if (!inScope(await access.twins(permission), twinId)) throw notAuthorized();
}

const modelNotFound = () => new NotFoundError('AI model not found', 'MODEL_NOT_FOUND');
const questionNotFound = () => new NotFoundError('Question not found', 'QUESTION_NOT_FOUND');
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
    if (!file || (!access.owns(file) && !(await access.holds(file.twinId, 'files.access')))) {
      throw new NotFoundError('File not found');
    }
  },

  async 'file.write'(access, { file }) {
    if (!file || !access.owns(file)) throw new NotFoundError('File not found');
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
      collection && (access.owns(collection) || (await access.holds(collection.twinId, 'files.access')));
    if (!allowed) throw new NotFoundError('Collection not found');
  },

  async 'collection.use'(access, { collection, twin }) {
    const usable =
      collection &&
      collection.twinId === twin &&
      (access.owns(collection) || (await access.holds(twin, 'files.access')));
    if (!usable) throw new NotFoundError('Collection not found');
  },

  async 'history.read'(access, { record }) {
    const notFound = () => new NotFoundError('History not found');
    if (!record) throw notFound();
    if (access.owns(record)) return;
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

  async 'approval.decide'(access, { card }) {
    if (!card || !access.owns(card)) throw new NotFoundError('Approval not found', 'APPROVAL_NOT_FOUND');
  },

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

  async 'account.manage'({ actor }) {
    if (!isSuper(actor) || actor.launchScope) throw new ForbiddenError('Only a super admin can manage accounts', 'SUPER_ONLY');
  },

  async 'question.read'(access, { question }) {
    if (!question || !(await access.holds(question.twinId, 'questions.list'))) throw questionNotFound();
  },

  async 'question.edit'(access, { question }) {
    if (!question || !(await access.holds(question.twinId, 'questions.list'))) throw questionNotFound();
    if (!(await access.holds(question.twinId, 'questions.edit'))) throw notAuthorized();
  },

  'question.create': (access, { twinId }) => namedTwin(access, twinId, 'questions.edit'),

  async 'credits.award'(access) {
    if (!isSuper(access.actor)) throw new ForbiddenError('Only a super admin can award free credits', 'SUPER_ONLY');
  },

  async 'credits.read'(access, { twinId }) {
    if (!(await access.holds(twinId, 'credits.edit')) || !(await isLiveTwin(access.db, twinId))) {
      throw new NotFoundError(INSTITUTION_NOT_FOUND);
    }
  },

  async 'memory.read'(access, { memory }) {
    if (!memory || !access.reaches(memory.twinId) || (!memory.shared && !access.owns(memory))) throw new NotFoundError(MEMORY_NOT_FOUND);
    return { manages: await access.check('memory.manage', { twin: memory.twinId }) };
  },

  async 'memory.edit'(access, { memory }) {
    const { manages } = await access.require('memory.read', { memory });
    const editable = access.owns(memory!) || (memory!.shared && manages);
    if (!editable) throw new ForbiddenError(MEMORY_NOT_EDITABLE, 'MEMORY_NOT_EDITABLE');
    return { manages };
  },

  async 'memory.manage'(access, { twin }) {
    if (isSuper(access.actor) && !access.actor.launchScope) return;
    if (!(await access.holds(twin, 'institutions.edit'))) throw notAuthorized();
  },
};

/** A grant held in one twin rather than a named action? */
export function isPlainGrant(action: string): boolean {
  return !Object.hasOwn(RULES, action);
}

/** The rule of a named action, or the plain grant check of a permission. */
export function ruleFor(action: string): Rule {
  return isPlainGrant(action) ? grantRule(action as Permission) : (RULES as unknown as Record<string, Rule>)[action];
}
