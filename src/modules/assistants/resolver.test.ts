// Behaviour 1 as a table: for every (caller, assistant) pair, the resolver runs the assistant when the
// caller could pick it and New Conversation otherwise, and GET /api/user/assistants lists exactly the
// pickable set. The world: twins T1, T2 and a deleted T5 on account A, T3 on no account, T4 on account B.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { actorFor, buildAssistant } from '../../../test/support/assistants.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { newId } from '../../platform/ids/ids.js';
import { insertMembership } from '../twins/twins.repo.js';
import { twins } from '../twins/twins.tables.js';
import type { AssistantRow, NewAssistant } from './assistants.tables.js';
import { resolveAssistant } from './resolver.js';
import { STANDARD_ASSISTANT_NAME } from './scope.js';

const CALLERS = ['alice', 'bob', 'carol', 'mgr', 'dave', 'frank', 'gina', 'sue', 'loner'] as const;
type Caller = (typeof CALLERS)[number];
const ALL = [...CALLERS];

/** Each assistant of the world, and exactly who may pick it. */
const TABLE: { key: string; who: readonly Caller[]; note: string }[] = [
  { key: 'sysActive', who: ALL, note: 'system assistant: everyone' },
  { key: 'sysUnpublished', who: [], note: 'unpublished system assistant: nobody' },
  { key: 'sysDeleted', who: [], note: 'deleted system assistant: nobody' },
  { key: 'alicePersonal', who: ['alice'], note: 'personal: only its owner' },
  { key: 'aliceDraft', who: ['alice'], note: 'unpublished personal: its owner' },
  { key: 'aliceGone', who: [], note: 'deleted personal: nobody' },
  { key: 't1Shared', who: ['alice', 'bob', 'carol', 'mgr'], note: "shared with T1: T1's members" },
  { key: 't1SharedUnpublished', who: ['bob'], note: 'unpublished twin assistant: its owner only' },
  { key: 't1Private', who: ['bob'], note: "twin assistant not shared: its owner only, not the twin's admin" },
  { key: 't1AdminOnly', who: ['bob', 'carol', 'mgr'], note: 'admin_only: owner, T1 admin, assistants.edit holder' },
  { key: 't1Account', who: ['alice', 'bob', 'carol', 'mgr', 'dave'], note: 'account-shared: also T2 on the same account' },
  { key: 't1AccountAdminOnly', who: ['bob', 'carol', 'mgr'], note: 'account-shared but admin_only: not offered to other twins' },
  { key: 't2Shared', who: ['dave'], note: 'shared with T2 only' },
  { key: 't2AliceOwn', who: [], note: "alice's own assistant in T2 while she works in T1" },
  { key: 't5Account', who: [], note: 'account-shared from a deleted twin' },
  { key: 't1Disabled', who: [], note: "listed in T1's assistantsDisabled" },
  { key: 't3Shared', who: ['gina', 'sue'], note: 'shared with T3 (no account); sue is a super admin working in T3' },
  { key: 't3AdminOnly', who: ['gina', 'sue'], note: 'admin_only in T3: owner and super admin' },
  { key: 't4Account', who: ['frank'], note: 'account-shared on another account' },
];

let t: TestApp;
const people = {} as Record<Caller, string>;
const tokens = {} as Record<Caller, string>;
const rows: Record<string, AssistantRow> = {};

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  const accountA = newId();
  const t1 = await buildTwin(db, { accountId: accountA });
  const t2 = await buildTwin(db, { accountId: accountA });
  const t3 = await buildTwin(db);
  const t4 = await buildTwin(db, { accountId: newId() });
  const t5 = await buildTwin(db, { accountId: accountA, deletedAt: new Date() });
  const make = async (name: Caller, options: Parameters<typeof buildUser>[1]) => {
    const built = await buildUser(db, options);
    people[name] = built.user.id;
    tokens[name] = await signIn(t.app, built.user.email);
    return built;
  };
  const alice = await make('alice', { twin: t1 });
  await insertMembership(db, { twinId: t2.id, userId: alice.user.id, role: 'user' });
  await make('bob', { twin: t1 });
  await make('carol', { twin: t1, role: 'admin' });
  await make('mgr', { twin: t1, grants: ['assistants.edit'] });
  await make('dave', { twin: t2 });
  await make('frank', { twin: t4 });
  await make('gina', { twin: t3 });
  const sue = await make('sue', { twin: t3, accountType: 'super' });
  void sue;
  await make('loner', { twin: null });

  const shared = { twinShared: true };
  const specs: Record<string, Partial<NewAssistant>> = {
    sysActive: {},
    sysUnpublished: { status: 'unpublished' },
    sysDeleted: { status: 'deleted' },
    alicePersonal: { userId: people.alice },
    aliceDraft: { userId: people.alice, status: 'unpublished' },
    aliceGone: { userId: people.alice, status: 'deleted' },
    t1Shared: { userId: people.bob, twinId: t1.id, ...shared },
    t1SharedUnpublished: { userId: people.bob, twinId: t1.id, ...shared, status: 'unpublished' },
    t1Private: { userId: people.bob, twinId: t1.id },
    t1AdminOnly: { userId: people.bob, twinId: t1.id, ...shared, adminOnly: true },
    t1Account: { userId: people.bob, twinId: t1.id, ...shared, accountShared: true },
    t1AccountAdminOnly: { userId: people.bob, twinId: t1.id, ...shared, accountShared: true, adminOnly: true },
    t2Shared: { userId: people.dave, twinId: t2.id, ...shared },
    t2AliceOwn: { userId: people.alice, twinId: t2.id },
    t5Account: { userId: people.dave, twinId: t5.id, ...shared, accountShared: true },
    t1Disabled: { userId: people.bob, twinId: t1.id, ...shared },
    t3Shared: { userId: people.gina, twinId: t3.id, ...shared },
    t3AdminOnly: { userId: people.gina, twinId: t3.id, ...shared, adminOnly: true },
    t4Account: { userId: people.frank, twinId: t4.id, ...shared, accountShared: true },
  };
  for (const [key, spec] of Object.entries(specs)) rows[key] = await buildAssistant(db, { name: key, ...spec });
  await db.update(twins).set({ assistantsDisabled: [rows.t1Disabled.id] }).where(eq(twins.id, t1.id));
});
afterAll(() => t.close());

describe('resolveAssistant (behaviour 1)', () => {
  const cases = TABLE.flatMap(({ key, who, note }) =>
    CALLERS.map((caller) => ({ caller, key, picks: who.includes(caller), note })),
  );

  it.each(cases)('$caller asking for $key runs it: $picks ($note)', async ({ caller, key, picks }) => {
    const db = t.platform.database.db;
    const resolved = await resolveAssistant(db, await actorFor(db, people[caller]), rows[key].id);
    if (picks) {
      expect(resolved.fallback).toBe(false);
      expect(resolved.assistant.id).toBe(rows[key].id);
      expect(resolved.instructions).toBe('Be helpful.');
    } else {
      expect(resolved.fallback).toBe(true);
      expect(resolved.assistant.name).toBe(STANDARD_ASSISTANT_NAME);
    }
  });

  it.each([
    { what: 'no id', id: undefined },
    { what: 'null', id: null },
    { what: 'a malformed id', id: 'not-an-id' },
    { what: 'an unknown id', id: 'aaaaaaaaaaaaaaaaaaaaaaaa' },
  ])('falls back to New Conversation for $what', async ({ id }) => {
    const db = t.platform.database.db;
    const resolved = await resolveAssistant(db, await actorFor(db, people.alice), id);
    expect(resolved).toMatchObject({ fallback: true, assistant: { name: STANDARD_ASSISTANT_NAME, userId: null, twinId: null } });
  });

  it('runs New Conversation itself when asked, even where the twin disables other assistants', async () => {
    const db = t.platform.database.db;
    const standard = await resolveAssistant(db, await actorFor(db, people.alice));
    const asked = await resolveAssistant(db, await actorFor(db, people.alice), standard.assistant.id);
    expect(asked.fallback).toBe(false);
    expect(asked.assistant.id).toBe(standard.assistant.id);
  });

  it('hands the engine what it needs from the assistant', async () => {
    const db = t.platform.database.db;
    const special = await buildAssistant(db, {
      userId: people.alice,
      conversationModel: 'gpt-special',
      ragEnabled: true,
      rememberHistory: 4,
      assistantToolMode: 'none',
      stsReasoningEffort: 'low',
      argument1: 'first',
    });
    const resolved = await resolveAssistant(db, await actorFor(db, people.alice), special.id);
    expect(resolved).toMatchObject({
      fallback: false,
      conversationModel: 'gpt-special',
      ragEnabled: true,
      rememberHistory: 4,
      toolMode: 'none',
      stsReasoningEffort: 'low',
      arguments: ['first', '', '', '', ''],
    });
    const standard = await resolveAssistant(db, await actorFor(db, people.alice));
    expect(standard).toMatchObject({ conversationModel: null, rememberHistory: null, toolMode: 'auto' });
  });
});

describe('GET /api/user/assistants lists exactly the pickable set', () => {
  it.each([...CALLERS])('for %s', async (caller) => {
    const response = await t.app.inject({ method: 'GET', url: '/api/user/assistants', headers: { 'x-access-token': tokens[caller] } });
    expect(response.statusCode).toBe(200);
    const data: { _id: string; name: string; standard: boolean }[] = response.json().data;
    expect(data[0]).toMatchObject({ name: STANDARD_ASSISTANT_NAME, standard: true });
    const listed = new Set(data.map((a) => a._id));
    const expected = TABLE.filter(({ who }) => who.includes(caller)).map(({ key }) => key).sort();
    const got = Object.keys(rows).filter((key) => listed.has(rows[key].id)).sort();
    expect(got).toEqual(expected);
  });
});
