// The Socket.IO Q&A route end to end: RECEIVE_STREAM chunks to the named socket, the JSON answer,
// cancel_request (partial answer kept and charged), cancel_streaming (chunks stop, the answer completes
// and is recorded, the next answer streams again), streamingFailed (the answer runs, to be resumed), and the refusals of behaviour 15
// (concurrent turns against a balance: admission.test.ts).
import { eq, sql } from 'drizzle-orm';
import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { askQanda } from '../../../test/support/http.js';
import { readSse } from '../../../test/support/sse-client.js';
import { collect, connectSocket, register } from '../../../test/support/socket-client.js';
import { creditLedger } from '../credits/credits.tables.js';
import { history } from '../history/history.tables.js';
import { findTwinById, updateTwin } from '../twins/twins.repo.js';
import { findUserById } from '../users/users.repo.js';
import type { StreamPayload } from './socket-events.js';
import { USAGE_LIMIT_MESSAGES } from './turn-limits.js';
import { changesHeard } from '../../../test/support/changes.js';
import { until } from '../../../test/support/until.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', ...PRICED } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close();
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

async function socketFor(who: BuiltUser & { token: string }): Promise<Socket> {
  const socket = await connectSocket(base, { auth: { token: who.token } });
  sockets.push(socket);
  expect((await register(socket, who.user.id)).event).toBe('connect_success');
  return socket;
}

const ask = (token: string, body: Record<string, unknown>) => askQanda(base, token, body);

const recordsOf = (userId: string) => db().select().from(history).where(eq(history.userId, userId));
const creditsOf = async (userId: string) => (await findUserById(db(), userId))!.credits;

describe('POST /api/ai/personal/qanda', () => {
  it('shows the balance a turn just charged on the very next profile refresh (the profile was cached before the turn)', async () => {
    const ada = await person();
    const refresh = async () => {
      const response = await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': ada.token } });
      expect(response.statusCode).toBe(200);
      return response.json().profile.credits as number;
    };
    expect(await refresh()).toBe(100);
    expect(await refresh()).toBe(100);
    model.enqueue({ chunks: ['Paid.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    expect((await ask(ada.token, { inputs: ['Hi'], requestArgs: {} })).body).toMatchObject({ success: true, credits: 1 });
    expect(await refresh()).toBe(99);
  });

  it('streams RECEIVE_STREAM chunks to the socket (prompt = text so far) and answers with the whole text', async () => {
    const ada = await person();
    const socket = await socketFor(ada);
    const received = collect<StreamPayload>(socket, 'RECEIVE_STREAM');
    const started = collect<Record<string, unknown>>(socket, 'STREAM_STARTED');
    const completed = collect<Record<string, unknown>>(socket, 'STREAM_COMPLETE');
    const done = collect<Record<string, unknown>>(socket, 'STREAM_DONE');
    model.enqueue({ chunks: ['One ', 'two ', 'three.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    const answer = await ask(ada.token, { inputs: ['Count'], requestArgs: { socketId: socket.id, assistantId: 'nope', selectedCourse: { course_id: 'c1', course_name: 'C' } } });
    expect(answer).toEqual({
      status: 200,
      body: {
        success: true,
        answer: 'One two three.',
        outputs: ['One two three.'],
        usage: { inputTokens: 500, outputTokens: 500, totalTokens: 1000 },
        credits: 1,
        historyId: expect.any(String),
        conversationId: expect.any(String),
        cancelled: false,
      },
    });
    await until(() => done.length === 1);
    const { historyId, conversationId } = answer.body as { historyId: string; conversationId: string };
    expect(started).toEqual([{ historyId, conversationId, seq: 1 }]);
    expect(received).toEqual([
      { prompt: 'One ', delta: 'One ', type: 'STREAM', seq: 2, historyId },
      { prompt: 'One two ', delta: 'two ', type: 'STREAM', seq: 3, historyId },
      { prompt: 'One two three.', delta: 'three.', type: 'STREAM', seq: 4, historyId },
    ]);
    expect(completed).toEqual([{ success: true, usage: 1000, outputs: ['One two three.'], credits: 1, historyId, conversationId, seq: 5 }]);
    expect(done).toEqual([{ historyId, seq: 6 }]);
    expect(received.at(-1)!.prompt).toBe(answer.body.answer);
    expect(await creditsOf(ada.user.id)).toBe(99);
  });

  it('answers streamingFailed with the historyId when the socket is not registered for the person; the answer runs and can be resumed', async () => {
    const ada = await person();
    model.enqueue({ chunks: ['Still ', 'here.'] });
    const lost = await ask(ada.token, { inputs: ['Hi'], requestArgs: { socketId: 'no-such-socket' } });
    expect(lost).toEqual({ status: 200, body: { success: true, streamingFailed: true, historyId: expect.any(String) } });
    const historyId = (lost.body as { historyId: string }).historyId;
    const frames = await readSse(await fetch(`${base}/api/ai/stream/${historyId}`, { headers: { authorization: `Bearer ${ada.token}` } })).rest();
    expect(frames.map((f) => f.type)).toEqual(['started', 'stream', 'stream', 'complete', 'done']);
    expect(frames.filter((f) => f.type === 'stream').map((f) => f.delta).join('')).toBe('Still here.');
    await until(async () => (await recordsOf(ada.user.id))[0]?.status === 'complete');

    const bob = await person();
    const bobs = await socketFor(bob);
    const bobsFrames = collect(bobs, 'RECEIVE_STREAM');
    const other = await ask(ada.token, { inputs: ['Hi'], requestArgs: { socketId: bobs.id } });
    expect(other.body).toEqual({ success: true, streamingFailed: true, historyId: expect.any(String) });
    await until(async () => (await recordsOf(ada.user.id)).every((row) => row.status !== 'streaming'));
    expect(bobsFrames).toEqual([]);
  });

  it('ends the turn on cancel_request, recording and charging only the partial answer', async () => {
    const ada = await person();
    const socket = await socketFor(ada);
    const received = collect<StreamPayload>(socket, 'RECEIVE_STREAM');
    model.enqueue({ chunks: ['Partial ', 'answer ', 'never sent'], stallAfter: 2 });
    const pending = ask(ada.token, { inputs: ['Tell me'], requestArgs: { socketId: socket.id } });
    await until(() => received.length === 2);
    socket.emit('cancel_request', { userId: ada.user.id });
    const answer = await pending;
    expect(answer.body).toMatchObject({ success: true, cancelled: true, answer: 'Partial answer ' });
    const [row] = await recordsOf(ada.user.id);
    expect(row).toMatchObject({ status: 'cancelled', answer: 'Partial answer ', credits: answer.body.credits });
    // Estimated usage of the partial: the prompt's characters / 4 in, the partial text / 4 out.
    expect(row.outputTokens).toBe(Math.ceil('Partial answer '.length / 4));
    expect(answer.body.credits).toBeGreaterThan(0);
    expect(await creditsOf(ada.user.id)).toBeCloseTo(100 - (answer.body.credits as number), 6);
  });

  it('stops chunks on cancel_streaming while the answer completes and is recorded; the next answer streams', async () => {
    const ada = await person();
    const socket = await socketFor(ada);
    const received = collect<StreamPayload>(socket, 'RECEIVE_STREAM');
    model.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e', 'f'], gapMs: 100 });
    const pending = ask(ada.token, { inputs: ['Letters'], requestArgs: { socketId: socket.id } });
    await until(() => received.length === 1);
    socket.emit('cancel_streaming', { userId: ada.user.id });
    const answer = await pending;
    expect(answer.body).toMatchObject({ success: true, cancelled: false, answer: 'abcdef' });
    expect(received.length).toBeLessThan(6);
    const [row] = await recordsOf(ada.user.id);
    expect(row).toMatchObject({ status: 'complete', answer: 'abcdef' });

    const before = received.length;
    model.enqueue({ chunks: ['again'] });
    await ask(ada.token, { inputs: ['More'], requestArgs: { socketId: socket.id } });
    await until(() => received.length === before + 1);
    expect(received.at(-1)).toEqual({ prompt: 'again', delta: 'again', type: 'STREAM', seq: 2, historyId: expect.any(String) });
  });

  it('answers a provider failure with 502 MODEL_FAILED and charges nothing', async () => {
    const ada = await person();
    model.setDefault({ status: 503, error: 'overloaded' });
    try {
      const answer = await ask(ada.token, { inputs: ['Hi'] });
      expect(answer.status).toBe(502);
      expect(answer.body).toMatchObject({ success: false, code: 'MODEL_FAILED', message: 'The model provider failed: overloaded (HTTP 503)' });
    } finally {
      model.setDefault({ chunks: ['ok'] });
    }
    expect(await creditsOf(ada.user.id)).toBe(100);
    expect((await recordsOf(ada.user.id))[0]).toMatchObject({ status: 'failed', credits: 0 });
  });

  it('refuses a turn past the per-person and per-twin daily caps with a clear message, charging nothing', async () => {
    const twin = await buildTwin(db(), { userDailyLimit: 1, twinDailyLimit: 2 });
    const ada = await person({ twin });
    const bob = await person({ twin });
    const cat = await person({ twin });
    expect((await ask(ada.token, { inputs: ['1'] })).status).toBe(200);
    const capped = await ask(ada.token, { inputs: ['2'] });
    expect(capped).toEqual({ status: 429, body: { success: false, message: USAGE_LIMIT_MESSAGES.user, code: 'USAGE_LIMIT_REACHED', scope: 'user', limit: 1 } });
    expect((await ask(bob.token, { inputs: ['1'] })).status).toBe(200);
    const twinCapped = await ask(cat.token, { inputs: ['1'] });
    expect(twinCapped.status).toBe(429);
    expect(twinCapped.body).toMatchObject({ message: USAGE_LIMIT_MESSAGES.twin, code: 'USAGE_LIMIT_REACHED' });
    expect(await creditsOf(cat.user.id)).toBe(100);
    expect(await recordsOf(cat.user.id)).toHaveLength(0);
    // Records older than 24 hours no longer count.
    await db().update(history).set({ createdAt: new Date(Date.now() - 25 * 3600_000) }).where(eq(history.twinId, twin.id));
    expect((await ask(ada.token, { inputs: ['again'] })).status).toBe(200);
  });

  it('admits exactly the cap when 30 turns of one twin race for its last slots, on every database', async () => {
    const twin = await buildTwin(db(), { twinDailyLimit: 7 });
    const people = await Promise.all(Array.from({ length: 3 }, () => person({ twin })));
    model.setDefault({ chunks: ['slow ', 'answer'], gapMs: 30 });
    let answers: Array<{ status: number; body: Record<string, unknown> }>;
    try {
      answers = await Promise.all(Array.from({ length: 30 }, (_, i) => ask(people[i % 3].token, { inputs: [`Q${i}`] })));
    } finally {
      model.setDefault({ chunks: ['ok'] });
    }
    expect(answers.filter((a) => a.status === 200)).toHaveLength(7);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(23);
    for (const answer of refused) expect(answer).toMatchObject({ status: 429, body: { code: 'USAGE_LIMIT_REACHED', scope: 'twin', limit: 7 } });
    const records = await db().select().from(history).where(eq(history.twinId, twin.id));
    expect(records).toHaveLength(7);
  });

  it('refuses a turn on an empty pool (402 INSUFFICIENT_CREDITS) before calling the model', async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 0 });
    const ada = await person({ twin });
    const before = model.requests.length;
    const answer = await ask(ada.token, { inputs: ['Hi'] });
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ success: false, code: 'INSUFFICIENT_CREDITS', message: "This Digital Twin's credit balance is too low" });
    expect(model.requests.length).toBe(before);
    expect(await creditsOf(ada.user.id)).toBe(100);
  });

  it("refuses a turn on the person's empty balance (402), with or without a cap, and writes nothing", async () => {
    for (const caps of [{}, { userDailyLimit: 5, twinDailyLimit: 50 }]) {
      const twin = await buildTwin(db(), caps);
      const ada = await person({ twin, credits: 0 });
      const before = model.requests.length;
      const answer = await ask(ada.token, { inputs: ['Hi'] });
      expect(answer.status).toBe(402);
      expect(answer.body).toMatchObject({ success: false, code: 'INSUFFICIENT_CREDITS', message: 'Your credit balance is too low' });
      expect(model.requests.length).toBe(before);
      expect(await db().select().from(history).where(eq(history.twinId, twin.id))).toEqual([]);
    }
  });

  it('refuses an inactive twin', async () => {
    const twin = await buildTwin(db(), { status: 'inactive' });
    const ada = await person({ twin });
    const answer = await ask(ada.token, { inputs: ['Hi'] });
    expect(answer).toMatchObject({ status: 403, body: { success: false, code: 'INSTITUTION_INACTIVE' } });
  });
});
