// The vocabulary of the access rules: what each action needs and answers, the twins a list may
// touch, and the refusal messages services share. access.ts asks, rules.ts decides.
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import type { Permission } from '../../platform/http/permissions.js';

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

export interface Owned {
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

export interface AccountTarget {
  accountType: string;
  currentTwinId: string | null;
}

/** What each action needs, and (second) what it answers. */
export interface Actions {
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
  /** A vault file: its uploader (within the twins the session reaches), or files.access in its twin; anyone else 404. */
  'file.read': [{ file: Owned | undefined }, void];
  /** Changing a vault file: its uploader only (an admin uses the uploads family); anyone else 404. */
  'file.write': [{ file: Owned | undefined }, void];
  /** Sharing a new file with the twin: files.access there. */
  'file.share': [{ twin: string }, void];
  /** A file in the admin uploads family: 404 without any right in its twin, 403 without uploads.delete. */
  'upload.delete': [{ file: { twinId: string } | undefined }, void];
  /** A collection (behaviour 10: its owner, within the twins the session reaches, or files.access in its twin), else 404. */
  'collection.read': [{ collection: Owned | undefined }, void];
  /** Filing an upload into a collection of the twin it goes to. */
  'collection.use': [{ collection: Owned | undefined; twin: string }, void];
  /** A conversation record's retrieval entries: its owner (within the twins the session reaches) or histories.list; a member of its twin 403, others 404. */
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
  /** Deciding a tool approval card: its person, within the twins the session reaches, else 404. */
  'approval.decide': [{ card: Owned | undefined }, void];
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
  /** Accounts (groups of twins): super admins only, outside a launch session. */
  'account.manage': [Record<string, never>, void];
  /** A suggested question: questions.list in its twin to see it (else 404), questions.edit to change it (else 403). */
  'question.read': [{ question: { twinId: string } | undefined }, void];
  'question.edit': [{ question: { twinId: string } | undefined }, void];
  /** A question added to a twin named in the body: unknown or another twin 404, a member without questions.edit 403. */
  'question.create': [{ twinId: string }, void];
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

/** What a rule may ask about the caller (AccessContext in access.ts answers, reading each twin once). */
export interface AccessQuestions {
  readonly db: Executor;
  readonly actor: Actor;
  permissionsIn(twinId: string): Promise<Permission[]>;
  holds(twinId: string, permission: Permission): Promise<boolean>;
  memberOf(twinId: string): Promise<boolean>;
  twins(permission: Permission, withDeleted?: boolean): Promise<TwinScope>;
  /**
   * May this session touch rows of the twin at all? A launch session only its own twin's (rows of no
   * twin included: not), any other session every twin's, as far as the rules then allow.
   */
  reaches(twinId: string | null): boolean;
  /** The caller's own row, within the twins the session reaches: a launch session owns nothing of another twin. */
  owns(row: Owned): boolean;
  require<A extends AccessAction>(action: A, target: AccessTarget<A>): Promise<AccessGrant<A>>;
  check<A extends AccessAction>(action: A, target: AccessTarget<A>): Promise<boolean>;
}
