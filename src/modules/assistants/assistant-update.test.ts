// PUT /api/user/assistant/{id}, rule by rule, as a table of cases through the real route: who may edit,
// unknown keys, update operators, enums and limits, sharing decided on the target twin, moving between
// twins, making an assistant personal. Each case builds its own assistant and checks body and row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildAssistant } from '../../../test/support/assistants.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { newId } from '../../platform/ids/ids.js';
import { insertMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findAssistantById, findStandardAssistant } from './assistants.repo.js';
import type { AssistantRow, NewAssistant } from './assistants.tables.js';

type Person = 'owner' | 'other' | 'editor' | 'admin' | 'outsider' | 'super';
type Twin = 'T1' | 'T2' | 'T3' | 'T4' | 'T5';

let t: TestApp;
const twins = {} as Record<Twin, TwinRow>;
const ids = {} as Record<Person, string>;
const tokens = {} as Record<Person, string>;

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  const account = newId();
  twins.T1 = await buildTwin(db, { accountId: account });
  twins.T2 = await buildTwin(db, { accountId: account });
  twins.T3 = await buildTwin(db); // no account
  twins.T4 = await buildTwin(db, { accountId: account, disableAssistantsForUser: true });
  twins.T5 = await buildTwin(db); // nobody below is a member
  const person = async (name: Person, options: Parameters<typeof buildUser>[1], extra: { twin: Twin; role?: 'user' | 'admin'; grants?: string[] }[] = []) => {
    const built = await buildUser(db, { twin: twins.T1, ...options });
    for (const m of extra) {
      await insertMembership(db, { twinId: twins[m.twin].id, userId: built.user.id, role: m.role ?? 'user', permissions: m.grants ?? [] });
    }
    ids[name] = built.user.id;
    tokens[name] = await signIn(t.app, built.user.email);
  };
  await person('owner', {}, [{ twin: 'T2' }, { twin: 'T3' }, { twin: 'T4' }]);
  await person('other', {});
  await person('editor', { grants: ['assistants.edit'] }, [{ twin: 'T4', grants: ['assistants.edit'] }]);
  await person('admin', { role: 'admin' }, [{ twin: 'T3', role: 'admin' }, { twin: 'T4', role: 'admin' }]);
  await person('outsider', { twin: twins.T5 });
  await person('super', { accountType: 'super' });
});
afterAll(() => t.close());

interface Setup extends Omit<Partial<NewAssistant>, 'userId' | 'twinId'> {
  owner?: Person | null;
  twin?: Twin | null;
}

interface Case {
  name: string;
  by: Person;
  given?: Setup;
  body: Record<string, unknown> | ((w: { twins: typeof twins; ids: typeof ids }) => Record<string, unknown>);
  status: number;
  message?: string;
  code?: string;
  scope?: string;
  dropped?: boolean;
  /** Expected row afterwards (twin by name, owner by person). Checked on every case: refused requests change nothing. */
  row?: Partial<AssistantRow> & { twin?: Twin | null; ownerIs?: Person };
}

const shared = { twinShared: true };
const long = (n: number) => 'm'.repeat(n);

const CASES: Case[] = [
  // Who may edit.
  { name: 'the owner edits', by: 'owner', body: { name: 'Renamed' }, status: 200, message: 'Assistant updated successfully', scope: 'user', dropped: false, row: { name: 'Renamed' } },
  { name: "a member edits another's shared assistant", by: 'other', given: shared, body: { name: 'X' }, status: 403, code: 'ASSISTANT_NOT_EDITABLE', row: { name: 'Original' } },
  { name: "a member edits another's editable_others assistant", by: 'other', given: { ...shared, editableOthers: true }, body: { name: 'Shared edit' }, status: 200, scope: 'institution', row: { name: 'Shared edit' } },
  { name: "an assistants.edit holder edits another's private assistant", by: 'editor', body: { description: 'by editor' }, status: 200, row: { description: 'by editor' } },
  { name: "a twin admin edits another's private assistant", by: 'admin', body: { description: 'by admin' }, status: 200, row: { description: 'by admin' } },
  { name: "a member cannot see another's private twin assistant", by: 'other', body: { name: 'X' }, status: 404, message: 'Assistant not found!', row: { name: 'Original' } },
  { name: "a member cannot see another's personal assistant", by: 'other', given: { twin: null }, body: { name: 'X' }, status: 404, message: 'Assistant not found!' },
  { name: "another twin's member gets 404", by: 'outsider', given: { ...shared, editableOthers: true }, body: { name: 'X' }, status: 404, message: 'Assistant not found!', row: { name: 'Original' } },
  { name: 'a deleted assistant is not found', by: 'owner', given: { status: 'deleted' }, body: { name: 'X' }, status: 404, message: 'Assistant not found!' },
  { name: 'a member cannot edit a system assistant', by: 'admin', given: { owner: null, twin: null }, body: { name: 'X' }, status: 403, row: { name: 'Original' } },
  { name: 'a super admin edits a system assistant', by: 'super', given: { owner: null, twin: null }, body: { name: 'Sys' }, status: 200, scope: 'system', row: { name: 'Sys' } },
  { name: 'an editable_others editor cannot move it', by: 'other', given: { ...shared, editableOthers: true }, body: (w) => ({ institution: w.twins.T2.id }), status: 403, code: 'ASSISTANT_OWNER_ONLY', row: { twin: 'T1' } },
  { name: 'an editable_others editor cannot change its status', by: 'other', given: { ...shared, editableOthers: true }, body: { status: 'unpublished' }, status: 403, code: 'ASSISTANT_OWNER_ONLY', row: { status: 'active' } },
  { name: 'an editable_others editor may resend unchanged owner fields', by: 'other', given: { ...shared, editableOthers: true }, body: { status: 'active', editable_others: true, name: 'Same' }, status: 200, row: { name: 'Same' } },
  { name: 'the owner unpublishes', by: 'owner', body: { status: 'unpublished' }, status: 200, row: { status: 'unpublished' } },
  // Unknown keys, read-only fields, operators, enums, limits.
  { name: 'unknown keys and read-only fields are ignored', by: 'owner', body: (w) => ({ name: 'Kept', foo: 1, created: '2000-01-01', liked_count: 99, user: w.ids.other, _id: newId() }), status: 200, row: { name: 'Kept', likedCount: 0, ownerIs: 'owner' } },
  { name: 'an empty body changes nothing', by: 'owner', body: {}, status: 200, dropped: false, row: { name: 'Original' } },
  { name: 'an update operator is refused', by: 'owner', body: { $set: { name: 'X' } }, status: 400, message: 'Invalid Properties', row: { name: 'Original' } },
  { name: 'a nested update operator is refused', by: 'owner', body: { name: { $gt: '' } }, status: 400, message: 'Invalid Properties', row: { name: 'Original' } },
  { name: 'assistantToolMode outside its enum', by: 'owner', body: { assistantToolMode: 'sometimes', name: 'X' }, status: 400, message: 'Invalid Properties', row: { name: 'Original' } },
  { name: 'stsReasoningEffort outside its enum', by: 'owner', body: { stsReasoningEffort: 'extreme' }, status: 400, message: 'Invalid Properties' },
  { name: 'status outside its enum', by: 'owner', body: { status: 'archived' }, status: 400, message: 'Invalid Properties', row: { status: 'active' } },
  { name: 'enum values inside are applied', by: 'owner', body: { assistantToolMode: 'required', stsReasoningEffort: 'high' }, status: 200, row: { assistantToolMode: 'required', stsReasoningEffort: 'high' } },
  { name: 'conversationModel of 201 characters', by: 'owner', body: { conversationModel: long(201) }, status: 400, message: 'Invalid Properties', row: { conversationModel: '' } },
  { name: 'conversationModel of 200 characters', by: 'owner', body: { conversationModel: long(200) }, status: 200, row: { conversationModel: long(200) } },
  { name: 'stsConversationModel of 201 characters', by: 'owner', body: { stsConversationModel: long(201) }, status: 400, message: 'Invalid Properties' },
  { name: 'stsConversationModel of 200 characters', by: 'owner', body: { stsConversationModel: long(200) }, status: 200, row: { stsConversationModel: long(200) } },
  { name: 'a malformed user id', by: 'owner', body: { user: 'abc' }, status: 400, message: 'Invalid Properties' },
  { name: 'a malformed institution id', by: 'owner', body: { institution: 'T1' }, status: 400, message: 'Invalid Properties', row: { twin: 'T1' } },
  { name: 'a wrong type', by: 'owner', body: { admin_only: 'yes' }, status: 400, message: 'Invalid Properties' },
  { name: 'remember_history must be an integer', by: 'owner', body: { remember_history: 1.5 }, status: 400, message: 'Invalid Properties' },
  // Sharing, decided on the twin the assistant is in.
  { name: 'a plain owner cannot turn sharing on', by: 'owner', body: { institution_shared: true }, status: 200, scope: 'user', dropped: true, row: { twinShared: false } },
  { name: 'an assistants.edit holder turns sharing on', by: 'editor', body: { institution_shared: true }, status: 200, scope: 'institution', dropped: false, row: { twinShared: true } },
  { name: 'the owner turns sharing off', by: 'owner', given: shared, body: { institution_shared: false }, status: 200, scope: 'user', dropped: false, row: { twinShared: false } },
  { name: "an editable_others editor cannot turn sharing off on another's assistant", by: 'other', given: { ...shared, editableOthers: true }, body: { institution_shared: false }, status: 200, scope: 'institution', dropped: true, row: { twinShared: true } },
  { name: 'a plain owner cannot turn admin_only on', by: 'owner', given: shared, body: { admin_only: true }, status: 200, dropped: true, row: { adminOnly: false } },
  { name: 'a twin admin turns admin_only on', by: 'admin', given: shared, body: { admin_only: true }, status: 200, dropped: false, row: { adminOnly: true } },
  { name: 'account sharing on a twin with an account', by: 'editor', given: shared, body: { account_shared: true }, status: 200, scope: 'account', dropped: false, row: { accountShared: true } },
  { name: 'account_shared without institution_shared is reset', by: 'editor', body: { account_shared: true }, status: 200, scope: 'user', dropped: true, row: { accountShared: false } },
  { name: 'account_shared is impossible on a twin with no account', by: 'admin', given: { ...shared, twin: 'T3' }, body: { account_shared: true }, status: 200, scope: 'institution', dropped: true, row: { accountShared: false, twinShared: true } },
  { name: 'turning institution sharing off resets account sharing', by: 'editor', given: { ...shared, accountShared: true }, body: { institution_shared: false }, status: 200, scope: 'user', dropped: true, row: { twinShared: false, accountShared: false } },
  // Moving between twins.
  { name: 'the owner moves a personal assistant into a twin', by: 'owner', given: { twin: null }, body: (w) => ({ institution: w.twins.T2.id }), status: 200, scope: 'user', dropped: false, row: { twin: 'T2' } },
  { name: 'a shared assistant arrives unshared where the caller is a plain member', by: 'owner', given: { ...shared, accountShared: true }, body: (w) => ({ institution: w.twins.T2.id }), status: 200, scope: 'user', dropped: true, row: { twin: 'T2', twinShared: false, accountShared: false } },
  { name: 'sharing asked for while moving as a plain member is dropped', by: 'owner', body: (w) => ({ institution: w.twins.T2.id, institution_shared: true }), status: 200, scope: 'user', dropped: true, row: { twin: 'T2', twinShared: false } },
  { name: 'an administrator of the target keeps its sharing', by: 'admin', given: { owner: 'admin', ...shared }, body: (w) => ({ institution: w.twins.T3.id }), status: 200, scope: 'institution', dropped: false, row: { twin: 'T3', twinShared: true } },
  { name: 'moving into a twin the caller is not a member of', by: 'owner', body: (w) => ({ institution: w.twins.T5.id }), status: 404, message: 'Institution not found', row: { twin: 'T1' } },
  { name: 'moving into an unknown twin', by: 'owner', body: { institution: 'bbbbbbbbbbbbbbbbbbbbbbbb' }, status: 404, message: 'Institution not found', row: { twin: 'T1' } },
  { name: 'moving into a twin with assistant creation off', by: 'owner', body: (w) => ({ institution: w.twins.T4.id, name: 'X' }), status: 403, code: 'ASSISTANTS_DISABLED', message: 'Assistant creation is turned off for this twin', row: { twin: 'T1', name: 'Original' } },
  { name: 'an assistants.edit holder there may move it in', by: 'editor', given: { owner: 'editor' }, body: (w) => ({ institution: w.twins.T4.id }), status: 200, row: { twin: 'T4' } },
  { name: 'an administrator there may move it in', by: 'admin', given: { owner: 'admin', ...shared }, body: (w) => ({ institution: w.twins.T4.id }), status: 200, scope: 'institution', row: { twin: 'T4', twinShared: true } },
  { name: "institution '' makes it personal and unshared", by: 'owner', given: { ...shared, accountShared: true, adminOnly: true }, body: { institution: '' }, status: 200, scope: 'user', dropped: true, row: { twin: null, twinShared: false, accountShared: false, adminOnly: false } },
  { name: "a manager making another's assistant personal leaves its owner", by: 'editor', given: shared, body: { institution: '' }, status: 200, scope: 'user', row: { twin: null, ownerIs: 'owner' } },
  { name: 'naming the same twin is not a move', by: 'owner', given: shared, body: (w) => ({ institution: w.twins.T1.id }), status: 200, scope: 'institution', dropped: false, row: { twin: 'T1', twinShared: true } },
];

describe('PUT /api/user/assistant/{id}', () => {
  it.each(CASES)('$name → $status', async (c) => {
    const db = t.platform.database.db;
    const { owner = 'owner', twin = 'T1', ...fields } = c.given ?? {};
    const assistant = await buildAssistant(db, {
      name: 'Original',
      ...fields,
      userId: owner ? ids[owner] : null,
      twinId: twin ? twins[twin].id : null,
    });
    const body = typeof c.body === 'function' ? c.body({ twins, ids }) : c.body;
    const response = await t.app.inject({ method: 'PUT', url: `/api/user/assistant/${assistant.id}`, headers: { 'x-access-token': tokens[c.by] }, payload: body });
    expect(response.statusCode, response.body).toBe(c.status);
    const json = response.json();
    if (c.status === 200) {
      expect(json).toEqual({ success: true, message: 'Assistant updated successfully', scope: json.scope, sharingDropped: json.sharingDropped });
      if (c.scope) expect(json.scope).toBe(c.scope);
      if (c.dropped !== undefined) expect(json.sharingDropped).toBe(c.dropped);
    } else {
      expect(json.success).toBe(false);
      if (c.status === 400) expect(json.error).toEqual(expect.any(Object));
    }
    if (c.message) expect(json.message).toBe(c.message);
    if (c.code) expect(json.code).toBe(c.code);
    const after = (await findAssistantById(db, assistant.id))!;
    const { twin: expectedTwin, ownerIs, ...columns } = c.row ?? {};
    expect(after).toMatchObject(columns);
    if (expectedTwin !== undefined) expect(after.twinId).toBe(expectedTwin ? twins[expectedTwin].id : null);
    if (ownerIs) expect(after.userId).toBe(ids[ownerIs]);
    if (c.status !== 200) expect(after.updatedAt).toEqual(assistant.updatedAt);
  });

  it('answers 401 Authentication Required without a token', async () => {
    const assistant = await buildAssistant(t.platform.database.db, { userId: ids.owner });
    const response = await t.app.inject({ method: 'PUT', url: `/api/user/assistant/${assistant.id}`, payload: { name: 'X' } });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ success: false, message: 'Authentication Required' });
  });

  it('answers 404 Assistant not found! for an unknown id and 400 for a malformed one', async () => {
    const unknown = await t.app.inject({ method: 'PUT', url: `/api/user/assistant/${'c'.repeat(24)}`, headers: { 'x-access-token': tokens.owner }, payload: {} });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ success: false, message: 'Assistant not found!' });
    const malformed = await t.app.inject({ method: 'PUT', url: '/api/user/assistant/nope', headers: { 'x-access-token': tokens.owner }, payload: {} });
    expect(malformed.statusCode).toBe(400);
  });

  it('keeps the standard assistant a system assistant that stays active', async () => {
    const standard = (await findStandardAssistant(t.platform.database.db))!;
    for (const body of [{ status: 'unpublished' }, { institution: twins.T1.id }]) {
      const response = await t.app.inject({ method: 'PUT', url: `/api/user/assistant/${standard.id}`, headers: { 'x-access-token': tokens.super }, payload: body });
      expect(response.statusCode).toBe(403);
      expect(response.json().code).toBe('SYSTEM_ASSISTANT');
    }
    const rename = await t.app.inject({ method: 'PUT', url: `/api/user/assistant/${standard.id}`, headers: { 'x-access-token': tokens.super }, payload: { description: 'Talk about anything.' } });
    expect(rename.json()).toMatchObject({ success: true, scope: 'system' });
  });
});
