// runTurn called directly, the way voice and embedded visitors will: a visitor's turn (the twin's pool
// pays, the per-user cap counts the visitor), and the memory and retrieval providers (what they return
// reaches the model and the history record; an assistant that bypasses the system context gets neither,
// while guardrails still apply).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorFor, buildAssistant } from '../../../test/support/assistants.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { retrievalEntry } from '../../../test/support/history-factories.js';
import { turnDepsFor } from '../../../test/support/turn-deps.js';
import { newId } from '../../platform/ids/ids.js';
import { creditLedger } from '../credits/credits.tables.js';
import { history } from '../history/history.tables.js';
import { twins } from '../twins/twins.tables.js';
import { insertMembership } from '../twins/twins.repo.js';
import { updateUser } from '../users/users.repo.js';
import { runTurn } from './run-turn.js';
import type { TurnDeps } from './turn-deps.js';
import { emptyContextProviders, type TurnContextProviders } from './turn-context.js';
import type { TurnCaller } from './turn-types.js';

let t: TestApp;
let model: FakeModelServer;
let deps: TurnDeps;
const asked: Array<{ kind: string; question: string; ragOnly?: boolean }> = [];

const providers: TurnContextProviders = {
  recall: async (caller, question) => {
    asked.push({ kind: 'recall', question });
    return { memories: caller.kind === 'person' ? [{ key: 'favourite colour', value: 'teal', shared: false }] : [] };
  },
  retrieve: async (_caller, question, { ragOnly }) => {
    asked.push({ kind: 'retrieve', question, ragOnly });
    return [retrievalEntry({ chunkText: 'Refunds are accepted within 30 days.', score: 0.9 })];
  },
};

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp();
  const deploymentModel = { baseUrl: model.url, defaultModel: 'fake-chat' };
  deps = turnDepsFor(t, deploymentModel, { deploymentPrice: { inputPer1k: 1, outputPer1k: 1 }, providers });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const sink = { onDelta: () => {}, onTool: () => {} };

describe('runTurn', () => {
  it("runs a visitor's turn on the twin's pool (whatever poolCredits says), counting the per-user cap by the visitor", async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db, { credits: 10, poolCredits: false, userDailyLimit: 1 });
    const visitor: TurnCaller = { kind: 'visitor', twinId: twin.id, visitorId: newId() };
    model.enqueue({ chunks: ['Hello, visitor.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    const result = await runTurn(deps, visitor, { inputs: ['Hi'] }, sink);
    expect(result).toMatchObject({ answer: 'Hello, visitor.', credits: 1, cancelled: false });
    // Paid by the pool, with its ledger row naming no person; the record is the visitor's.
    const [pool] = await db.select({ credits: twins.credits, held: twins.creditsHeld }).from(twins).where(eq(twins.id, twin.id));
    expect(pool).toEqual({ credits: 9, held: 0 });
    const ledger = await db.select().from(creditLedger).where(eq(creditLedger.twinId, twin.id));
    expect(ledger).toMatchObject([{ account: 'institution', userId: null, delta: -1, reason: 'conversation.turn' }]);
    const [row] = await db.select().from(history).where(eq(history.id, result.historyId));
    expect(row).toMatchObject({ userId: visitor.visitorId, status: 'complete', credits: 1, heldCredits: 0 });

    // The same visitor is past the per-user cap; another visitor of the twin is not.
    await expect(runTurn(deps, visitor, { inputs: ['Again?'] }, sink)).rejects.toMatchObject({ status: 429, code: 'USAGE_LIMIT_REACHED' });
    model.enqueue({ chunks: ['Hello, other visitor.'] });
    const other = await runTurn(deps, { kind: 'visitor', twinId: twin.id, visitorId: newId() }, { inputs: ['Hi'] }, sink);
    expect(other.answer).toBe('Hello, other visitor.');
  });

  it("refuses a visitor's turn the twin's pool cannot hold, writing nothing", async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db, { credits: 0 });
    const visitorId = newId();
    await expect(runTurn(deps, { kind: 'visitor', twinId: twin.id, visitorId }, { inputs: ['Hi'] }, sink)).rejects.toMatchObject({
      status: 402,
      code: 'INSUFFICIENT_CREDITS',
      message: "This Digital Twin's credit balance is too low",
    });
    expect(await db.select().from(history).where(eq(history.userId, visitorId))).toEqual([]);
  });

  it('puts recalled memories and retrieved passages in the system text and on the history record', async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db, { guardrailsEnabled: true, guardrailsText: 'Stay polite.' });
    const ada = await buildUser(db, { twin, credits: 10 });
    const rag = await buildAssistant(db, { twinId: twin.id, twinShared: true, ragEnabled: true, instructions: 'You answer from files.' });
    asked.length = 0;
    model.enqueue({ chunks: ['Within 30 days.'] });
    const result = await runTurn(deps, { kind: 'person', actor: await actorFor(db, ada.user.id) }, { inputs: ['Refunds?'], assistantId: rag.id }, sink);
    expect(result).toMatchObject({ answer: 'Within 30 days.', cancelled: false });
    expect(asked).toEqual([
      { kind: 'recall', question: 'Refunds?' },
      { kind: 'retrieve', question: 'Refunds?', ragOnly: false },
    ]);
    const system = model.requests.at(-1)!.system;
    for (const text of ['You answer from files.', 'Stay polite.', 'favourite colour: teal', 'Refunds are accepted within 30 days.']) expect(system).toContain(text);
    const [row] = await db.select().from(history).where(eq(history.id, result.historyId));
    expect(row.memories).toEqual([{ key: 'favourite colour', value: 'teal', shared: false }]);
    expect(row.ragSearch).toHaveLength(1);
    expect(row.ragSearch[0]).toMatchObject({ chunkText: 'Refunds are accepted within 30 days.' });
  });

  it('skips memory and retrieval for an assistant that bypasses the system context, keeping the guardrails', async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db, { guardrailsEnabled: true, guardrailsText: 'Stay polite.' });
    const ada = await buildUser(db, { twin, credits: 10 });
    const bare = await buildAssistant(db, { twinId: twin.id, twinShared: true, ragEnabled: true, bypassSystemContext: true });
    asked.length = 0;
    await runTurn(deps, { kind: 'person', actor: await actorFor(db, ada.user.id) }, { inputs: ['Refunds?'], assistantId: bare.id }, sink);
    expect(asked).toEqual([]);
    const system = model.requests.at(-1)!.system;
    expect(system).toContain('Stay polite.');
    expect(system).not.toContain('teal');
  });
});

describe('runTurn with earlier exchanges', () => {
  const person = (actor: Awaited<ReturnType<typeof actorFor>>): TurnCaller => ({ kind: 'person', actor });

  it('sends the exchanges of the conversation it continues, and none of a conversation it may not continue', async () => {
    const db = t.platform.database.db;
    const first = await buildTwin(db);
    const ada = await buildUser(db, { twin: first, credits: 10, rememberHistoryCount: 5 });
    const bob = await buildUser(db, { twin: first, credits: 10, rememberHistoryCount: 5 });
    model.enqueue({ chunks: ['Paris.'] });
    const opened = await runTurn(deps, person(await actorFor(db, ada.user.id)), { inputs: ['Capital of France?'] }, sink);

    model.enqueue({ chunks: ['About 2 million.'] });
    const continued = await runTurn(deps, person(await actorFor(db, ada.user.id)), { inputs: ['Its population?'], conversationId: opened.conversationId }, sink);
    expect(continued.conversationId).toBe(opened.conversationId);
    expect(model.requests.at(-1)!.messages.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
      { role: 'user', content: 'Its population?' },
    ]);

    // Another person naming Ada's conversation gets a new one, without her exchanges.
    model.enqueue({ chunks: ['Hello.'] });
    const intruder = await runTurn(deps, person(await actorFor(db, bob.user.id)), { inputs: ['Hi'], conversationId: opened.conversationId }, sink);
    expect(intruder.conversationId).not.toBe(opened.conversationId);
    expect(model.requests.at(-1)!.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'Hi' }]);

    // Ada herself, now in another twin, naming the first twin's conversation: a new one, nothing carried over.
    const second = await buildTwin(db);
    await insertMembership(db, { twinId: second.id, userId: ada.user.id, role: 'user' });
    await updateUser(db, ada.user.id, { currentTwinId: second.id });
    model.enqueue({ chunks: ['Hello again.'] });
    const elsewhere = await runTurn(deps, person(await actorFor(db, ada.user.id)), { inputs: ['Hi again'], conversationId: opened.conversationId }, sink);
    expect(elsewhere.conversationId).not.toBe(opened.conversationId);
    expect(model.requests.at(-1)!.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'Hi again' }]);
  });

  it('writes nothing for a refused turn, even with its context reads under way', async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db);
    const broke = await buildUser(db, { twin, credits: 0 });
    const before = await db.select().from(history).where(eq(history.userId, broke.user.id));
    await expect(runTurn(deps, person(await actorFor(db, broke.user.id)), { inputs: ['Anything?'] }, sink)).rejects.toMatchObject({ status: 402 });
    expect(before).toEqual([]);
    expect(await db.select().from(history).where(eq(history.userId, broke.user.id))).toEqual([]);
  });
});

describe('runTurn when retrieval fails', () => {
  it('shows retrieval as a failed tool and still answers, without passages, logging the cause', async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db);
    const ada = await buildUser(db, { twin, credits: 10 });
    const rag = await buildAssistant(db, { twinId: twin.id, twinShared: true, ragEnabled: true });
    const warnings: string[] = [];
    const failing: TurnDeps = {
      ...deps,
      providers: { ...providers, retrieve: async () => { throw new Error('embedding endpoint unreachable'); } },
      log: { warn: (details, message) => warnings.push(`${message}: ${(details as { err: Error }).err.message}`) },
    };
    const tools: Array<[string, string]> = [];
    model.enqueue({ chunks: ['Answered anyway.'] });
    const result = await runTurn(failing, { kind: 'person', actor: await actorFor(db, ada.user.id) }, { inputs: ['Refunds?'], assistantId: rag.id }, {
      onDelta: () => {},
      onTool: (name, status) => tools.push([name, status]),
    });
    expect(tools).toEqual([['retrieval', 'started'], ['retrieval', 'failed']]);
    expect(result).toMatchObject({ answer: 'Answered anyway.', cancelled: false });
    expect(warnings).toEqual(['retrieval failed; the turn answers without passages: embedding endpoint unreachable']);
    const [row] = await db.select().from(history).where(eq(history.id, result.historyId));
    expect(row).toMatchObject({ status: 'complete', ragSearch: [] });
  });

  it("tells this process's caches of the balance it charged (its settle does): the person's, or the twin's pool; nothing when nothing was charged", async () => {
    const db = t.platform.database.db;
    const told: Array<{ table: string; key: string }> = [];
    const telling = { ...deps, providers: emptyContextProviders, changes: { committed: (change: { table: string; key: string }) => void told.push(change) } };
    const own = await buildTwin(db);
    const ada = await buildUser(db, { twin: own, credits: 10 });
    model.enqueue({ chunks: ['Paid.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    const paid = await runTurn(telling, { kind: 'person', actor: await actorFor(db, ada.user.id) }, { inputs: ['Hi'] }, sink);
    expect(paid.credits).toBe(1);
    expect(told).toEqual([{ table: 'users', key: ada.user.id }]);

    const pool = await buildTwin(db, { poolCredits: true, credits: 10 });
    const bea = await buildUser(db, { twin: pool, credits: 0 });
    model.enqueue({ chunks: ['Pooled.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    const pooled = await runTurn(telling, { kind: 'person', actor: await actorFor(db, bea.user.id) }, { inputs: ['Hi'] }, sink);
    expect(pooled.credits).toBe(1);
    expect(told.at(-1)).toEqual({ table: 'institutions', key: pool.id });

    told.length = 0;
    model.enqueue({ status: 400, error: 'refused' });
    const failed = await runTurn(telling, { kind: 'person', actor: await actorFor(db, ada.user.id) }, { inputs: ['Hi'] }, sink);
    expect(failed.failed).toBeDefined();
    expect(told).toEqual([]);
  });
});
