// requireAccess on a real database: for each action, one caller it lets through, one of the same twin
// it refuses (403, or 404 where the spec hides the object), and a caller of another twin (cross-tenant:
// 404 for an object, 403 for a grant). Targets stand for the rows a service has loaded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { actorFor } from '../../../test/support/assistants.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError } from '../../platform/http/errors.js';
import { PERMISSIONS } from '../../platform/http/permissions.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { insertMembership } from '../twins/twins.repo.js';
import { AccessContext, checkAccess, requireAccess, type AccessAction, type AccessTarget } from './access.js';

let database: TestDatabase;
const db = () => database.db;

let twinA: TwinRow;
let twinB: TwinRow;
/** Admin of A (working in A). */
let admin: Actor;
/** Member of A without grants (working in A). */
let member: Actor;
/** Member of A holding users.list and uploads.list only (working in A). */
let lister: Actor;
/** Admin of B only (working in B): another tenant. */
let outsider: Actor;
/** Admin of A working in B: A's permissions are read from the membership, not the actor. */
let elsewhere: Actor;
let superAdmin: Actor;
const ids: Record<string, string> = {};

beforeAll(async () => {
  database = await openTestDatabase();
  twinA = await buildTwin(db(), { name: 'Twin A' });
  twinB = await buildTwin(db(), { name: 'Twin B' });
  const built = {
    admin: await buildUser(db(), { twin: twinA, role: 'admin' }),
    member: await buildUser(db(), { twin: twinA }),
    lister: await buildUser(db(), { twin: twinA, grants: ['users.list', 'uploads.list'] }),
    outsider: await buildUser(db(), { twin: twinB, role: 'admin' }),
    elsewhere: await buildUser(db(), { twin: twinB }),
    superAdmin: await buildUser(db(), { twin: null, accountType: 'super' }),
  };
  await insertMembership(db(), { twinId: twinA.id, userId: built.elsewhere.user.id, role: 'admin' });
  for (const [name, person] of Object.entries(built)) ids[name] = person.user.id;
  admin = await actorFor(db(), ids.admin);
  member = await actorFor(db(), ids.member);
  lister = await actorFor(db(), ids.lister);
  outsider = await actorFor(db(), ids.outsider);
  elsewhere = await actorFor(db(), ids.elsewhere);
  superAdmin = await actorFor(db(), ids.superAdmin);
});
afterAll(() => database.close());

/** 'ok', or the refusal's status and code. */
async function outcome<A extends AccessAction>(actor: Actor, action: A, target: AccessTarget<A>): Promise<string> {
  try {
    await requireAccess(db(), actor, action, target);
    return 'ok';
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return error.code ? `${error.status} ${error.code}` : `${error.status}`;
  }
}

describe('a grant held in one twin (every permission)', () => {
  it.each(PERMISSIONS)('%s: the twin admin may, a member without it 403, another twin 403', async (permission) => {
    expect(await outcome(admin, permission, { twin: twinA.id })).toBe('ok');
    expect(await outcome(elsewhere, permission, { twin: twinA.id })).toBe('ok');
    expect(await outcome(superAdmin, permission, { twin: twinA.id })).toBe('ok');
    expect(await outcome(member, permission, { twin: twinA.id })).toBe('403 FORBIDDEN');
    expect(await outcome(outsider, permission, { twin: twinA.id })).toBe('403 FORBIDDEN');
  });

  it('a launch session holds no admin grant, even in its own twin (behaviour 16)', async () => {
    const launched = { ...admin, launchScope: { twinId: twinA.id } };
    expect(await outcome(launched, 'users.edit', { twin: twinA.id })).toBe('403 FORBIDDEN');
  });
});

describe('twin scopes', () => {
  it('twins.managed: the twins where the grant is held, all for a super admin; none 403 unless asked for empty', async () => {
    expect(await requireAccess(db(), admin, 'twins.managed', { permission: 'users.list' })).toEqual([twinA.id]);
    expect(await requireAccess(db(), superAdmin, 'twins.managed', { permission: 'users.list' })).toBe('all');
    expect(await requireAccess(db(), outsider, 'twins.managed', { permission: 'users.list' })).toEqual([twinB.id]);
    expect(await outcome(member, 'twins.managed', { permission: 'users.list' })).toBe('403 FORBIDDEN');
    expect(await requireAccess(db(), member, 'twins.managed', { permission: 'users.list', ifNone: 'empty' })).toEqual([]);
  });

  it('twins.managed leaves a deleted twin out unless withDeleted', async () => {
    const gone = await buildTwin(db(), { deletedAt: new Date() });
    const person = await buildUser(db(), { twin: gone, role: 'admin' });
    const actor = await actorFor(db(), person.user.id);
    expect(await outcome(actor, 'twins.managed', { permission: 'users.list' })).toBe('403 FORBIDDEN');
    expect(await requireAccess(db(), actor, 'twins.managed', { permission: 'users.list', withDeleted: true })).toEqual([gone.id]);
  });

  it('history.admin: the same scope; its refusal has no code', async () => {
    expect(await requireAccess(db(), admin, 'history.admin', { permission: 'histories.list' })).toEqual([twinA.id]);
    expect(await outcome(member, 'history.admin', { permission: 'histories.list' })).toBe('403');
    expect(await requireAccess(db(), outsider, 'history.admin', { permission: 'histories.list' })).toEqual([twinB.id]);
  });
});

describe('twins', () => {
  it('twin.read / twin.edit: 404 without the grant, in the twin or outside it', async () => {
    for (const action of ['twin.read', 'twin.edit'] as const) {
      expect(await outcome(admin, action, { twin: twinA })).toBe('ok');
      expect(await outcome(member, action, { twin: twinA })).toBe('404');
      expect(await outcome(outsider, action, { twin: twinA })).toBe('404');
      expect(await outcome(admin, action, { twin: undefined })).toBe('404');
    }
  });

  it('twin.create / twin.delete: super admins only', async () => {
    for (const action of ['twin.create', 'twin.delete'] as const) {
      expect(await outcome(superAdmin, action, {})).toBe('ok');
      expect(await outcome(admin, action, {})).toBe('403 SUPER_ONLY');
    }
  });

  it('twin.revoke: a member without institutions.edit 403 (no code), another twin 404', async () => {
    expect(await outcome(admin, 'twin.revoke', { twin: twinA })).toBe('ok');
    expect(await outcome(member, 'twin.revoke', { twin: twinA })).toBe('403');
    expect(await outcome(outsider, 'twin.revoke', { twin: twinA })).toBe('404');
  });
});

describe('working in a twin', () => {
  it('twin.switch: its members and super admins; another twin 404', async () => {
    expect(await outcome(member, 'twin.switch', { twin: twinA })).toBe('ok');
    expect(await outcome(elsewhere, 'twin.switch', { twin: twinA })).toBe('ok');
    expect(await outcome(superAdmin, 'twin.switch', { twin: twinB })).toBe('ok');
    expect(await outcome(outsider, 'twin.switch', { twin: twinA })).toBe('404');
    expect(await outcome(member, 'twin.switch', { twin: undefined })).toBe('404');
  });

  it('membership.leave: one\'s own membership only', async () => {
    expect(await outcome(member, 'membership.leave', { membership: { userId: ids.member } })).toBe('ok');
    expect(await outcome(admin, 'membership.leave', { membership: { userId: ids.member } })).toBe('403 NOT_YOURS');
    expect(await outcome(outsider, 'membership.leave', { membership: undefined })).toBe('404');
  });

  it('launch.sign: an administrator of the current twin, not in a launch session', async () => {
    expect(await outcome(admin, 'launch.sign', {})).toBe('ok');
    expect(await outcome(member, 'launch.sign', {})).toBe('403 NOT_TWIN_ADMIN');
    expect(await outcome({ ...admin, launchScope: { twinId: twinA.id } }, 'launch.sign', {})).toBe('403 NOT_TWIN_ADMIN');
  });

  it('file.upload: with uploads off for users, its administrators only', async () => {
    expect(await outcome(member, 'file.upload', { twin: { disableFileUploadForUser: false } })).toBe('ok');
    expect(await outcome(admin, 'file.upload', { twin: { disableFileUploadForUser: true } })).toBe('ok');
    expect(await outcome(member, 'file.upload', { twin: { disableFileUploadForUser: true } })).toBe('403 FILE_UPLOAD_DISABLED');
  });

  it('subscription.manage: an administrator of the current twin; no twin 404', async () => {
    expect(await outcome(admin, 'subscription.manage', { twin: twinA })).toBe('ok');
    expect(await outcome(member, 'subscription.manage', { twin: twinA })).toBe('403 NOT_TWIN_ADMIN');
    expect(await outcome(superAdmin, 'subscription.manage', { twin: undefined })).toBe('404');
  });

  it('entitlement.edit: super admins only', async () => {
    expect(await outcome(superAdmin, 'entitlement.edit', {})).toBe('ok');
    expect(await outcome(admin, 'entitlement.edit', {})).toBe('403 SUPER_ONLY');
  });

  it('account.manage: super admins only', async () => {
    expect(await outcome(superAdmin, 'account.manage', {})).toBe('ok');
    expect(await outcome(admin, 'account.manage', {})).toBe('403 SUPER_ONLY');
  });

  it("question.read / question.edit: questions.list to see (else 404), questions.edit to change (else 403); another twin's 404", async () => {
    const question = { twinId: twinA.id };
    expect(await outcome(admin, 'question.edit', { question })).toBe('ok');
    expect(await outcome(lister, 'question.read', { question })).toBe('404 QUESTION_NOT_FOUND');
    expect(await outcome(outsider, 'question.read', { question })).toBe('404 QUESTION_NOT_FOUND');
    expect(await outcome(superAdmin, 'question.edit', { question })).toBe('ok');
    expect(await outcome(admin, 'question.read', { question: undefined })).toBe('404 QUESTION_NOT_FOUND');
  });
});

describe('people', () => {
  it('user.enrol / user.move: a twin named in a body; unknown or another twin 404, a member 403', async () => {
    for (const action of ['user.enrol', 'user.move'] as const) {
      expect(await outcome(admin, action, { twinId: twinA.id })).toBe('ok');
      expect(await outcome(member, action, { twinId: twinA.id })).toBe('403 FORBIDDEN');
      expect(await outcome(outsider, action, { twinId: twinA.id })).toBe('404');
      expect(await outcome(admin, action, { twinId: 'ffffffffffffffffffffffff' })).toBe('404');
    }
  });

  it('user.read: people of the twins where the caller holds users.list; others 404', async () => {
    expect(await outcome(admin, 'user.read', { user: { id: ids.member } })).toBe('ok');
    expect(await outcome(superAdmin, 'user.read', { user: { id: ids.outsider } })).toBe('ok');
    expect(await outcome(member, 'user.read', { user: { id: ids.admin } })).toBe('404');
    expect(await outcome(outsider, 'user.read', { user: { id: ids.member } })).toBe('404');
    expect(await outcome(admin, 'user.read', { user: undefined })).toBe('404');
  });

  it('user.edit / user.delete (behaviour 3): the grant on the account\'s twin; super accounts for supers', async () => {
    const person = { accountType: 'user', currentTwinId: twinA.id };
    const superAccount = { accountType: 'super', currentTwinId: twinA.id };
    for (const action of ['user.edit', 'user.delete'] as const) {
      expect(await outcome(admin, action, { user: person })).toBe('ok');
      expect(await outcome(superAdmin, action, { user: superAccount })).toBe('ok');
      expect(await outcome(admin, action, { user: superAccount })).toBe('403 SUPER_ONLY');
      expect(await outcome(lister, action, { user: person })).toBe('403 FORBIDDEN');
      expect(await outcome(outsider, action, { user: person })).toBe('403 FORBIDDEN');
    }
  });

  it('user.make-super: super admins only', async () => {
    expect(await outcome(superAdmin, 'user.make-super', {})).toBe('ok');
    expect(await outcome(admin, 'user.make-super', {})).toBe('403 SUPER_ONLY');
  });

  it('user.reset-factors: users.edit on their twin; a member 403, another twin 404', async () => {
    const person = { accountType: 'user', currentTwinId: twinA.id };
    expect(await outcome(admin, 'user.reset-factors', { user: person })).toBe('ok');
    expect(await outcome(member, 'user.reset-factors', { user: person })).toBe('403');
    expect(await outcome(outsider, 'user.reset-factors', { user: person })).toBe('404');
    expect(await outcome(admin, 'user.reset-factors', { user: { accountType: 'super', currentTwinId: twinA.id } })).toBe('403');
  });

  it('membership.edit: users.list to see it, users.edit to change it, a super admin\'s for supers', async () => {
    const membership = { twinId: twinA.id };
    const person = { accountType: 'user' };
    expect(await outcome(admin, 'membership.edit', { membership, person })).toBe('ok');
    expect(await outcome(lister, 'membership.edit', { membership, person })).toBe('403 FORBIDDEN');
    expect(await outcome(member, 'membership.edit', { membership, person })).toBe('404');
    expect(await outcome(outsider, 'membership.edit', { membership, person })).toBe('404');
    expect(await outcome(admin, 'membership.edit', { membership, person: { accountType: 'super' } })).toBe('403 SUPER_ONLY');
  });

  it('session.delete: sessions.delete in the session\'s twin, else 404', async () => {
    expect(await outcome(admin, 'session.delete', { session: { twinId: twinA.id } })).toBe('ok');
    expect(await outcome(member, 'session.delete', { session: { twinId: twinA.id } })).toBe('404');
    expect(await outcome(outsider, 'session.delete', { session: { twinId: twinA.id } })).toBe('404');
  });
});

describe('files', () => {
  const file = () => ({ userId: ids.member, twinId: twinA.id });

  it('file.read: the uploader or files.access in its twin; anyone else 404', async () => {
    expect(await outcome(member, 'file.read', { file: file() })).toBe('ok');
    expect(await outcome(admin, 'file.read', { file: file() })).toBe('ok');
    expect(await outcome(lister, 'file.read', { file: file() })).toBe('404');
    expect(await outcome(outsider, 'file.read', { file: file() })).toBe('404');
    expect(await outcome(member, 'file.read', { file: undefined })).toBe('404');
  });

  it('file.write: the uploader only, even against an admin (404)', async () => {
    expect(await outcome(member, 'file.write', { file: file() })).toBe('ok');
    expect(await outcome(admin, 'file.write', { file: file() })).toBe('404');
    expect(await outcome(outsider, 'file.write', { file: file() })).toBe('404');
  });

  it('file.share: files.access in the twin', async () => {
    expect(await outcome(admin, 'file.share', { twin: twinA.id })).toBe('ok');
    expect(await outcome(member, 'file.share', { twin: twinA.id })).toBe('403 FORBIDDEN');
    expect(await outcome(outsider, 'file.share', { twin: twinA.id })).toBe('403 FORBIDDEN');
  });

  it('upload.delete: 404 without any right in the file\'s twin, 403 without uploads.delete', async () => {
    expect(await outcome(admin, 'upload.delete', { file: file() })).toBe('ok');
    expect(await outcome(lister, 'upload.delete', { file: file() })).toBe('403 FORBIDDEN');
    expect(await outcome(member, 'upload.delete', { file: file() })).toBe('404');
    expect(await outcome(outsider, 'upload.delete', { file: file() })).toBe('404');
  });

  it('collection.read (behaviour 10) and collection.use: the owner or files.access; others 404', async () => {
    const collection = file();
    expect(await outcome(member, 'collection.read', { collection })).toBe('ok');
    expect(await outcome(admin, 'collection.read', { collection })).toBe('ok');
    expect(await outcome(lister, 'collection.read', { collection })).toBe('404');
    expect(await outcome(outsider, 'collection.read', { collection })).toBe('404');
    expect(await outcome(member, 'collection.use', { collection, twin: twinA.id })).toBe('ok');
    expect(await outcome(lister, 'collection.use', { collection, twin: twinA.id })).toBe('404');
    expect(await outcome(outsider, 'collection.use', { collection, twin: twinB.id })).toBe('404');
  });
});

describe('history and feedback', () => {
  it('history.read: the owner or histories.list; a member of its twin 403, another twin 404', async () => {
    const record = { userId: ids.admin, twinId: twinA.id };
    expect(await outcome(admin, 'history.read', { record })).toBe('ok');
    expect(await outcome(elsewhere, 'history.read', { record })).toBe('ok');
    expect(await outcome(member, 'history.read', { record })).toBe('403');
    expect(await outcome(outsider, 'history.read', { record })).toBe('404');
  });

  it('feedback.read: inside the scope; a member of its twin 403, another twin 404', async () => {
    const feedback = { twinId: twinA.id };
    expect(await outcome(admin, 'feedback.read', { feedback, scope: [twinA.id] })).toBe('ok');
    expect(await outcome(member, 'feedback.read', { feedback, scope: [twinB.id] })).toBe('403');
    expect(await outcome(outsider, 'feedback.read', { feedback, scope: [twinB.id] })).toBe('404');
  });
});

describe('assistants', () => {
  const ofTwinA = (userId: string | null, overrides: Partial<{ status: string; editableOthers: boolean }> = {}) => ({
    assistant: { userId, twinId: twinA.id, status: 'active', editableOthers: false, ...overrides },
    pickable: async () => true,
  });
  const hidden = (userId: string | null) => ({ ...ofTwinA(userId), pickable: async () => false });

  it('assistant.read: pickable, owned or listed; another twin\'s 404', async () => {
    expect(await requireAccess(db(), member, 'assistant.read', ofTwinA(ids.admin))).toMatchObject({ owner: false, canEdit: false });
    expect(await requireAccess(db(), admin, 'assistant.read', hidden(ids.member))).toMatchObject({ manages: true, canEdit: true });
    expect(await outcome(outsider, 'assistant.read', hidden(ids.member))).toBe('404 ASSISTANT_NOT_FOUND');
    expect(await outcome(member, 'assistant.read', { ...ofTwinA(ids.admin), assistant: undefined })).toBe('404 ASSISTANT_NOT_FOUND');
  });

  it('a deleted assistant: admin views of its managers only', async () => {
    const deleted = ofTwinA(ids.member, { status: 'deleted' });
    expect(await outcome(admin, 'assistant.read', { ...deleted, includeDeleted: true })).toBe('ok');
    expect(await outcome(admin, 'assistant.read', deleted)).toBe('404 ASSISTANT_NOT_FOUND');
    expect(await outcome(member, 'assistant.read', { ...deleted, includeDeleted: true })).toBe('404 ASSISTANT_NOT_FOUND');
  });

  it('assistant.edit: owner, manager or editable_others; others 403', async () => {
    expect(await outcome(member, 'assistant.edit', ofTwinA(ids.member))).toBe('ok');
    expect(await outcome(admin, 'assistant.edit', ofTwinA(ids.member))).toBe('ok');
    expect(await outcome(lister, 'assistant.edit', ofTwinA(ids.admin, { editableOthers: true }))).toBe('ok');
    expect(await outcome(lister, 'assistant.edit', ofTwinA(ids.admin))).toBe('403 ASSISTANT_NOT_EDITABLE');
    expect(await outcome(outsider, 'assistant.edit', hidden(ids.member))).toBe('404 ASSISTANT_NOT_FOUND');
  });

  it('assistant.edit with a change: moves, status and editable_others for owners and managers; system assistants stay', async () => {
    const change = { moving: false, status: true, editableOthers: false, standard: false };
    const shared = ofTwinA(ids.admin, { editableOthers: true });
    expect(await outcome(lister, 'assistant.edit', { ...shared, change: { ...change, status: false } })).toBe('ok');
    expect(await outcome(lister, 'assistant.edit', { ...shared, change })).toBe('403 ASSISTANT_OWNER_ONLY');
    expect(await outcome(admin, 'assistant.edit', { ...shared, change })).toBe('ok');
    const system = { ...ofTwinA(null), assistant: { userId: null, twinId: null, status: 'active', editableOthers: false } };
    expect(await outcome(superAdmin, 'assistant.edit', { ...system, change: { ...change, status: false, moving: true } })).toBe('403 SYSTEM_ASSISTANT');
    expect(await outcome(superAdmin, 'assistant.edit', { ...system, change: { ...change, standard: true } })).toBe('403 SYSTEM_ASSISTANT');
    expect(await outcome(superAdmin, 'assistant.edit', { ...system, change })).toBe('ok');
  });

  it('assistant.delete: owner or assistants.delete; the standard one never', async () => {
    expect(await outcome(member, 'assistant.delete', { ...ofTwinA(ids.member), standard: false })).toBe('ok');
    expect(await outcome(admin, 'assistant.delete', { ...ofTwinA(ids.member), standard: false })).toBe('ok');
    expect(await outcome(lister, 'assistant.delete', { ...ofTwinA(ids.admin), standard: false })).toBe('403 ASSISTANT_NOT_DELETABLE');
    expect(await outcome(superAdmin, 'assistant.delete', { ...ofTwinA(null), standard: true })).toBe('403 SYSTEM_ASSISTANT');
    expect(await outcome(outsider, 'assistant.delete', { ...hidden(ids.member), standard: false })).toBe('404 ASSISTANT_NOT_FOUND');
  });

  it('assistant.place: a twin the caller belongs to, answering whether they manage its assistants', async () => {
    expect(await requireAccess(db(), admin, 'assistant.place', { twin: twinA })).toBe(true);
    expect(await requireAccess(db(), member, 'assistant.place', { twin: twinA })).toBe(false);
    expect(await outcome(outsider, 'assistant.place', { twin: twinA })).toBe('404 INSTITUTION_NOT_FOUND');
    const closed = { ...twinA, disableAssistantsForUser: true };
    expect(await requireAccess(db(), admin, 'assistant.place', { twin: closed })).toBe(true);
    expect(await outcome(member, 'assistant.place', { twin: closed })).toBe('403 ASSISTANTS_DISABLED');
  });
});

describe('custom models and MCP servers', () => {
  it.each([
    ['model', 'models.edit', '404 MODEL_NOT_FOUND'],
    ['mcp', 'mcp.edit', '404 MCP_SERVER_NOT_FOUND'],
  ] as const)('%s.read / write / create', async (kind, _permission, notFound) => {
    const key = kind === 'model' ? 'model' : 'server';
    const read = `${kind}.read` as const;
    const write = `${kind}.write` as const;
    const create = `${kind}.create` as const;
    const ofA = { [key]: { twinId: twinA.id } } as AccessTarget<typeof read>;
    const global = { [key]: { twinId: null } } as AccessTarget<typeof read>;
    expect(await outcome(admin, read, ofA)).toBe('ok');
    expect(await outcome(admin, write, ofA)).toBe('ok');
    expect(await outcome(admin, read, global)).toBe('ok');
    expect(await outcome(admin, write, global)).toBe('403 FORBIDDEN');
    expect(await outcome(superAdmin, write, global)).toBe('ok');
    expect(await outcome(member, read, ofA)).toBe(notFound);
    expect(await outcome(outsider, read, ofA)).toBe(notFound);
    expect(await outcome(admin, create, { twinId: twinA.id })).toBe('ok');
    expect(await outcome(outsider, create, { twinId: twinA.id })).toBe('403 FORBIDDEN');
    expect(await outcome(admin, create, { twinId: null })).toBe('403 FORBIDDEN');
    expect(await outcome(superAdmin, create, { twinId: null })).toBe('ok');
  });
});

describe('credits and memory', () => {
  it('credits.award: super admins only; credits.read: credits.edit there, else 404', async () => {
    expect(await outcome(superAdmin, 'credits.award', {})).toBe('ok');
    expect(await outcome(admin, 'credits.award', {})).toBe('403 SUPER_ONLY');
    expect(await outcome(admin, 'credits.read', { twinId: twinA.id })).toBe('ok');
    expect(await outcome(member, 'credits.read', { twinId: twinA.id })).toBe('404');
    expect(await outcome(outsider, 'credits.read', { twinId: twinA.id })).toBe('404');
  });

  it('memory.manage: institutions.edit in the twin, or a super admin outside a launch session', async () => {
    expect(await checkAccess(db(), admin, 'memory.manage', { twin: twinA.id })).toBe(true);
    expect(await checkAccess(db(), superAdmin, 'memory.manage', { twin: twinA.id })).toBe(true);
    expect(await checkAccess(db(), member, 'memory.manage', { twin: twinA.id })).toBe(false);
    expect(await checkAccess(db(), outsider, 'memory.manage', { twin: twinA.id })).toBe(false);
  });
});

describe('memories', () => {
  const own = () => ({ userId: ids.member, shared: false, twinId: twinA.id });
  const shared = () => ({ userId: ids.member, shared: true, twinId: twinA.id });

  it('memory.read: shared rows and one\'s own; another person\'s personal row 404', async () => {
    expect(await requireAccess(db(), member, 'memory.read', { memory: own() })).toEqual({ manages: false });
    expect(await requireAccess(db(), admin, 'memory.read', { memory: shared() })).toEqual({ manages: true });
    expect(await outcome(admin, 'memory.read', { memory: own() })).toBe('404');
    expect(await outcome(outsider, 'memory.read', { memory: undefined })).toBe('404');
  });

  it('memory.edit: one\'s own, or a shared row of a twin one manages; else 403', async () => {
    expect(await outcome(member, 'memory.edit', { memory: own() })).toBe('ok');
    expect(await outcome(admin, 'memory.edit', { memory: shared() })).toBe('ok');
    expect(await outcome(lister, 'memory.edit', { memory: shared() })).toBe('403 MEMORY_NOT_EDITABLE');
    expect(await outcome(admin, 'memory.edit', { memory: own() })).toBe('404');
  });
});

describe("a launch session and the person's own rows", () => {
  // The person (a member of A) in a launch session of twin B: their rows of A are another twin's.
  const launched = (): Actor => ({ ...member, twinId: twinB.id, role: 'user', permissions: [], launchScope: { twinId: twinB.id } });
  const row = (twinId: string) => ({ userId: ids.member, twinId });
  const ownedRowRules: Array<[string, (twinId: string) => Promise<string>]> = [
    ['file.read', (twin) => outcome(launched(), 'file.read', { file: row(twin) })],
    ['file.write', (twin) => outcome(launched(), 'file.write', { file: row(twin) })],
    ['collection.read', (twin) => outcome(launched(), 'collection.read', { collection: row(twin) })],
    ['collection.use', (twin) => outcome(launched(), 'collection.use', { collection: row(twin), twin })],
    ['history.read', (twin) => outcome(launched(), 'history.read', { record: row(twin) })],
    ['memory.read', (twin) => outcome(launched(), 'memory.read', { memory: { ...row(twin), shared: false } })],
    ['memory.read (shared)', (twin) => outcome(launched(), 'memory.read', { memory: { userId: ids.admin, twinId: twin, shared: true } })],
    ['memory.edit', (twin) => outcome(launched(), 'memory.edit', { memory: { ...row(twin), shared: false } })],
    ['approval.decide', (twin) => outcome(launched(), 'approval.decide', { card: row(twin) })],
  ];

  it.each(ownedRowRules)('%s: a row of another twin is not found, one of its own twin is', async (_name, ask) => {
    expect(await ask(twinA.id)).toMatch(/^404/);
    expect(await ask(twinB.id)).toBe('ok');
  });

  it('reaches its own twin only; a full session every twin', () => {
    const access = new AccessContext(db(), launched());
    expect([access.reaches(twinB.id), access.reaches(twinA.id), access.reaches(null)]).toEqual([true, false, false]);
    expect(new AccessContext(db(), member).reaches(twinB.id)).toBe(true);
  });
});

describe('an access context', () => {
  it('reads another twin\'s permissions once for many questions', async () => {
    const access = new AccessContext(db(), elsewhere);
    const first = access.permissionsIn(twinA.id);
    expect(access.permissionsIn(twinA.id)).toBe(first);
    expect(await access.check('uploads.delete', { twin: twinA.id })).toBe(true);
    expect(await access.check('uploads.delete', { twin: twinB.id })).toBe(false);
  });
});
