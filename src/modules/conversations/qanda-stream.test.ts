// The SSE Q&A route end to end against the fake model server: the frames in order and shape, the
// record and the charge, provider failures, a closed request, behaviours 1, 8, 11 and 12, history.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAssistant } from '../../../test/support/assistants.js';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { readSse } from '../../../test/support/sse-client.js';
import { insertCustomModel } from '../custom-models/custom-models.repo.js';
import { history } from '../history/history.tables.js';
import { updateTwin } from '../twins/twins.repo.js';
import { findUserById } from '../users/users.repo.js';
import { EMPTY_ANSWER_NOTICE } from './stream-turn.js';
import { changesHeard } from '../../../test/support/changes.js';
import { until } from '../../../test/support/until.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', SSE_HEARTBEAT_MS: '40', ...PRICED } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const db = () => t.platform.database.db;

async function person(overrides: Parameters<typeof buildUser>[1] = {}): Promise<BuiltUser & { token: string }> {
  const built = await buildUser(db(), { credits: 100, ...overrides });
  return { ...built, token: await signIn(t.app, built.user.email) };
}

function ask(token: string, body: Record<string, unknown>, signal?: AbortSignal, header = 'authorization'): Promise<Response> {
  return fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', [header]: header === 'authorization' ? `Bearer ${token}` : token },
    body: JSON.stringify(body),
    signal,
  });
}

const recordOf = async (id: string) => (await db().select().from(history).where(eq(history.id, id)))[0];
const creditsOf = async (userId: string) => (await findUserById(db(), userId))!.credits;

describe('POST /api/ai/personal-stream/qanda-stream', () => {
  it('streams connected, started, stream frames, complete and done, numbered; records the turn and charges its usage', async () => {
    const ada = await person();
    model.enqueue({ chunks: ['Hello ', 'there.'], usage: { prompt_tokens: 900, completion_tokens: 300 } });
    const response = await ask(ada.token, { inputs: ['Hi?'], requestArgs: { ragOnly: false } });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = readSse(response);
    const frames: Array<Record<string, unknown>> = [];
    const ids: Array<string | undefined> = [];
    for (let frame = await reader.next(); frame; frame = await reader.next()) {
      frames.push(frame);
      ids.push(frame.type === 'connected' ? undefined : reader.lastEventId);
    }
    const complete = frames.at(-2)!;
    const historyId = complete.historyId as string;
    const conversationId = complete.conversationId as string;
    expect(frames).toEqual([
      { type: 'connected', message: 'Stream established' },
      { type: 'started', historyId, conversationId, seq: 1 },
      { type: 'stream', prompt: 'Hello ', delta: 'Hello ', seq: 2, historyId },
      { type: 'stream', prompt: 'there.', delta: 'there.', seq: 3, historyId },
      { type: 'complete', success: true, usage: 1200, outputs: ['Hello there.'], credits: 1.2, historyId, conversationId, seq: 4 },
      { type: 'done', seq: 5, historyId },
    ]);
    expect(ids).toEqual([undefined, ...[1, 2, 3, 4, 5].map((seq) => `${historyId}:${seq}`)]);
    const streamed = frames.filter((f) => f.type === 'stream').map((f) => f.delta).join('');
    expect(streamed).toBe('Hello there.');
    const row = await recordOf(complete.historyId as string);
    expect(row).toMatchObject({ status: 'complete', question: 'Hi?', answer: 'Hello there.', inputTokens: 900, outputTokens: 300, credits: 1.2, assistantName: 'New Conversation' });
    expect(await creditsOf(ada.user.id)).toBeCloseTo(98.8, 6);
  });

  it('keeps a slow answer alive with comment heartbeats between frames (SSE_HEARTBEAT_MS)', async () => {
    const ada = await person();
    model.enqueue({ chunks: ['Slow ', 'but ', 'sure.'], gapMs: 150 });
    const reader = readSse(await ask(ada.token, { inputs: ['Take your time'] }));
    const frames = await reader.rest();
    expect(frames.filter((frame) => frame.type === 'stream').map((frame) => frame.delta).join('')).toBe('Slow but sure.');
    expect(frames.at(-1)).toEqual({ type: 'done', seq: 6, historyId: frames[1].historyId });
    // ~300 ms of gaps at one ping every 40 ms.
    expect(reader.comments.length).toBeGreaterThanOrEqual(3);
    expect(new Set(reader.comments)).toEqual(new Set([': ping']));
  });

  it('refuses a token that is not sent as Bearer', async () => {
    const ada = await person();
    const response = await ask(ada.token, { inputs: ['Hi?'] }, undefined, 'x-access-token');
    expect(response.status).toBe(401);
  });

  it('turns a provider failure into an error frame then done, charges nothing and marks the record failed', async () => {
    const ada = await person();
    model.setDefault({ status: 500, error: 'upstream exploded' });
    try {
      const frames = await readSse(await ask(ada.token, { inputs: ['Hi?'] })).rest();
      const historyId = frames[1].historyId;
      expect(frames).toEqual([
        { type: 'connected', message: 'Stream established' },
        { type: 'started', historyId, conversationId: expect.any(String), seq: 1 },
        { type: 'error', error: { message: 'The model provider failed: upstream exploded (HTTP 500)', code: 'MODEL_FAILED' }, seq: 2, historyId },
        { type: 'done', seq: 3, historyId },
      ]);
    } finally {
      model.setDefault({ chunks: ['ok'] });
    }
    expect(await creditsOf(ada.user.id)).toBe(100);
    const [row] = await db().select().from(history).where(eq(history.userId, ada.user.id));
    expect(row).toMatchObject({ status: 'failed', credits: 0, error: expect.stringContaining('upstream exploded') });
  });

  it('cancels the turn when the request closes, keeping and charging the partial answer', async () => {
    const ada = await person();
    model.enqueue({ chunks: ['Only ', 'this ', 'never'], stallAfter: 2 });
    const client = new AbortController();
    const reader = readSse(await ask(ada.token, { inputs: ['Hi?'] }, client.signal));
    expect(await reader.next()).toMatchObject({ type: 'connected' });
    expect(await reader.next()).toMatchObject({ type: 'started', seq: 1 });
    expect(await reader.next()).toMatchObject({ delta: 'Only ' });
    expect(await reader.next()).toMatchObject({ delta: 'this ' });
    client.abort();
    await until(async () => (await db().select().from(history).where(eq(history.userId, ada.user.id)))[0]?.status === 'cancelled');
    const [row] = await db().select().from(history).where(eq(history.userId, ada.user.id));
    expect(row).toMatchObject({ status: 'cancelled', answer: 'Only this ' });
    expect(row.credits).toBeGreaterThan(0);
    expect(await creditsOf(ada.user.id)).toBeCloseTo(100 - row.credits, 6);
  });

  it('answers an empty model reply with the notice to try again (behaviour 11)', async () => {
    const ada = await person();
    model.enqueue({ chunks: [] });
    const frames = await readSse(await ask(ada.token, { inputs: ['Hi?'] })).rest();
    expect(frames[2]).toEqual({ type: 'stream', prompt: EMPTY_ANSWER_NOTICE, delta: EMPTY_ANSWER_NOTICE, seq: 2, historyId: frames[1].historyId });
    expect(frames[3]).toMatchObject({ type: 'complete', outputs: [EMPTY_ANSWER_NOTICE] });
  });

  it('runs a foreign or deleted assistant as New Conversation (behaviour 1), and a pickable one as itself', async () => {
    const ada = await person();
    const other = await buildTwin(db());
    const foreign = await buildAssistant(db(), { twinShared: true, twinId: other.id, instructions: 'FOREIGN-INSTRUCTIONS' });
    const deleted = await buildAssistant(db(), { twinShared: true, twinId: ada.twin!.id, instructions: 'DELETED-INSTRUCTIONS', status: 'deleted' });
    const own = await buildAssistant(db(), { twinShared: true, twinId: ada.twin!.id, instructions: 'OWN-INSTRUCTIONS' });
    for (const [assistant, expected] of [
      [foreign, 'New Conversation'],
      [deleted, 'New Conversation'],
      [own, own.name],
    ] as const) {
      const frames = await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: assistant.id } })).rest();
      const row = await recordOf(frames.at(-2)!.historyId as string);
      expect(row.assistantName).toBe(expected);
      const system = model.requests.at(-1)!.system;
      expect(system.includes(assistant.instructions)).toBe(assistant === own);
    }
  });

  it('sends the guardrail text for every assistant only when guardrails are on (behaviour 8)', async () => {
    const twin = await buildTwin(db(), { guardrailsEnabled: true, guardrailsText: 'GUARDRAIL: never discuss salaries.' });
    const ada = await person({ twin });
    const own = await buildAssistant(db(), { twinShared: true, twinId: twin.id, instructions: 'OWN' });
    for (const assistantId of [undefined, own.id]) {
      await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: assistantId } })).rest();
      expect(model.requests.at(-1)!.system).toContain('GUARDRAIL: never discuss salaries.');
    }
    await updateTwin(db(), twin.id, { guardrailsEnabled: false });
    await changesHeard(t.app);
    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: own.id } })).rest();
    expect(model.requests.at(-1)!.system).not.toContain('GUARDRAIL');
  });

  it("uses a twin's settings as an administrator just saved them, on the very next turn (the twin is cached between turns)", async () => {
    const twin = await buildTwin(db(), { guardrailsEnabled: true, guardrailsText: 'FIRST RULE' });
    const ada = await person({ twin });
    const admin = await person({ twin, role: 'admin' });
    for (const text of ['FIRST RULE', 'FIRST RULE']) {
      await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: {} })).rest();
      expect(model.requests.at(-1)!.system).toContain(text);
    }
    const saved = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/institution/${twin.id}`,
      headers: { 'x-access-token': admin.token },
      payload: { guardrailsText: 'SECOND RULE' },
    });
    expect(saved.statusCode).toBe(200);
    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: {} })).rest();
    expect(model.requests.at(-1)!.system).toContain('SECOND RULE');
    expect(model.requests.at(-1)!.system).not.toContain('FIRST RULE');

    const paused = await t.app.inject({ method: 'PUT', url: `/api/admin/institution/${twin.id}`, headers: { 'x-access-token': admin.token }, payload: { status: 'inactive' } });
    expect(paused.statusCode).toBe(200);
    const refused = await ask(ada.token, { inputs: ['Hi?'], requestArgs: {} });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ success: false, code: 'INSTITUTION_INACTIVE' });
  });

  it('raises reasoning effort to the model minimum, respects off, and sends none to a model without one (behaviour 12)', async () => {
    const twin = await buildTwin(db(), { reasoningEffort: 'low' });
    const ada = await person({ twin });
    await insertCustomModel(db(), { twinId: twin.id, name: 'Thinker', model: 'fake-reasoner', minReasoningEffort: 'medium', inputPricePer1k: 2, outputPricePer1k: 4 });
    const thinker = await buildAssistant(db(), { twinShared: true, twinId: twin.id, conversationModel: 'Thinker' });
    const plain = await buildAssistant(db(), { twinShared: true, twinId: twin.id });

    model.enqueue({ chunks: ['a'], usage: { prompt_tokens: 1000, completion_tokens: 1000 } });
    const frames = await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: thinker.id } })).rest();
    expect(model.requests.at(-1)).toMatchObject({ model: 'fake-reasoner', reasoningEffort: 'medium' });
    expect(frames.at(-2)).toMatchObject({ credits: 6 }); // the custom model's prices: 2 + 4 per 1K

    await updateTwin(db(), twin.id, { reasoningEffort: 'high' });
    await changesHeard(t.app);
    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: thinker.id } })).rest();
    expect(model.requests.at(-1)!.reasoningEffort).toBe('high');

    await updateTwin(db(), twin.id, { reasoningEffort: 'off' });
    await changesHeard(t.app);
    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: thinker.id } })).rest();
    expect(model.requests.at(-1)!.reasoningEffort).toBe('none');

    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: plain.id } })).rest();
    expect(model.requests.at(-1)).toMatchObject({ model: 'fake-chat', reasoningEffort: undefined });

    // A reasoning model without a minimum ('off' as its minimum): the twin's effort as it is, off included.
    await insertCustomModel(db(), { twinId: twin.id, name: 'Free thinker', model: 'fake-free-reasoner', minReasoningEffort: 'off' });
    const free = await buildAssistant(db(), { twinShared: true, twinId: twin.id, conversationModel: 'Free thinker' });
    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: free.id } })).rest();
    expect(model.requests.at(-1)).toMatchObject({ model: 'fake-free-reasoner', reasoningEffort: 'none' });
    await updateTwin(db(), twin.id, { reasoningEffort: 'minimal' });
    await changesHeard(t.app);
    await readSse(await ask(ada.token, { inputs: ['Hi?'], requestArgs: { assistant_id: free.id } })).rest();
    expect(model.requests.at(-1)!.reasoningEffort).toBe('minimal');
  });

  it('sends the earlier exchanges of the conversation (remember_history)', async () => {
    const ada = await person();
    model.enqueue({ chunks: ['Paris.'] });
    const first = await readSse(await ask(ada.token, { inputs: ['Capital of France?'] })).rest();
    const conversationId = first.at(-2)!.conversationId;
    model.enqueue({ chunks: ['About 2 million.'] });
    await readSse(await ask(ada.token, { inputs: ['Capital of France?', 'Its population?'], requestArgs: { conversationId } })).rest();
    const sent = model.requests.at(-1)!.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);
    expect(sent).toEqual([
      ['user', 'Capital of France?'],
      ['assistant', 'Paris.'],
      ['user', 'Its population?'],
    ]);
  });
});

