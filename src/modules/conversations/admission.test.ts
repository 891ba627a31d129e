// Admission as a reservation (behaviour 15, credits never overdrawn): a priced turn holds its most
// expensive cost from the balance that pays before the model is called, and its settle charges the real
// usage and gives the rest back. Under 200 concurrent questions: at most as many answers as the balance
// funds, every answered token charged, no overdraft, caps exact, nothing left held. Runs on PGlite and,
// with TEST_DATABASE_URL, on PostgreSQL.
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { askQanda } from '../../../test/support/http.js';
import { readSse } from '../../../test/support/sse-client.js';
import { creditLedger } from '../credits/credits.tables.js';
import { history } from '../history/history.tables.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { releaseStaleTurns, STALE_TURN_ERROR } from './turn-holds.js';
import { startRecord } from './turn-record.repo.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', ...PRICED } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const db = () => t.platform.database.db;
/** 500 tokens in and 500 out at 1 credit per 1,000 each way: every answered turn costs exactly 1 credit. */
const ONE_CREDIT = { prompt_tokens: 500, completion_tokens: 500 };

async function person(overrides: Parameters<typeof buildUser>[1] = {}): Promise<BuiltUser & { token: string }> {
  const built = await buildUser(db(), { credits: 0, ...overrides });
  return { ...built, token: await signIn(t.app, built.user.email) };
}

const ask = (token: string, body: Record<string, unknown>) => askQanda(base, token, body);

async function race(people: Array<{ token: string }>, count: number) {
  const before = model.requests.length;
  model.setDefault({ chunks: ['an ', 'answer'], gapMs: 5, usage: ONE_CREDIT });
  try {
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => ask(people[i % people.length].token, { inputs: [`Question ${String(i).padStart(3, '0')}`] })));
    return { answers, modelCalls: model.requests.length - before };
  } finally {
    model.setDefault({ chunks: ['ok'] });
  }
}

async function recordsIn(twinId: string) {
  return db().select().from(history).where(eq(history.twinId, twinId));
}

async function ledgerTotal(where: ReturnType<typeof eq>) {
  const [row] = await db().select({ total: sql<number>`coalesce(sum(-${creditLedger.delta}), 0)::float` }).from(creditLedger).where(where);
  return row.total;
}

describe('admission holds the most expensive cost', () => {
  it('answers at most what a pool funds when 200 questions race for it: every answer charged in full, no overdraft, nothing left held', async () => {
    // Each turn holds its prompt bound (about 2,100 tokens) and the twin's output limit (1,000): ~3.1 credits.
    const twin = await buildTwin(db(), { poolCredits: true, credits: 20, maxCompletionTokens: 1000 });
    const people = await Promise.all(Array.from({ length: 10 }, () => person({ twin })));
    const { answers, modelCalls } = await race(people, 200);

    const answered = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.length).toBeLessThanOrEqual(20);
    for (const answer of answered) expect(answer.body).toMatchObject({ success: true, credits: 1 });
    for (const answer of refused) expect(answer).toMatchObject({ status: 402, body: { success: false, code: 'INSUFFICIENT_CREDITS' } });
    // The model was called for the answered turns only.
    expect(modelCalls).toBe(answered.length);

    const [pool] = await db().select().from(twins).where(eq(twins.id, twin.id));
    expect(pool.creditsHeld).toBe(0);
    expect(pool.credits).toBeGreaterThanOrEqual(0);
    expect(pool.credits).toBeCloseTo(20 - answered.length, 6);
    expect(await ledgerTotal(eq(creditLedger.twinId, twin.id))).toBeCloseTo(answered.length, 6);
    const records = await recordsIn(twin.id);
    expect(records).toHaveLength(answered.length);
    for (const record of records) expect(record).toMatchObject({ status: 'complete', credits: 1, heldCredits: 0, inputTokens: 500, outputTokens: 500 });
  });

  it("holds the person's own balance the same way, and the caps stay exact among 200 racing turns", async () => {
    const twin = await buildTwin(db(), { userDailyLimit: 12, maxCompletionTokens: 1000 });
    const ada = await person({ twin, credits: 100 });
    const { answers } = await race([ada], 200);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(12);
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer).toMatchObject({ status: 429, body: { code: 'USAGE_LIMIT_REACHED', scope: 'user', limit: 12 } });
    }
    const [row] = await db().select().from(users).where(eq(users.id, ada.user.id));
    expect(row).toMatchObject({ credits: 88, creditsHeld: 0 });
    expect(await ledgerTotal(eq(creditLedger.userId, ada.user.id))).toBeCloseTo(12, 6);
  });

  it('refuses a turn the balance cannot hold, though the balance is above zero, before calling the model', async () => {
    const twin = await buildTwin(db(), { maxCompletionTokens: 1000 });
    const ada = await person({ twin, credits: 3 });
    const before = model.requests.length;
    const answer = await ask(ada.token, { inputs: ['Hello?'] });
    expect(answer).toMatchObject({ status: 402, body: { success: false, code: 'INSUFFICIENT_CREDITS', message: 'Your credit balance is too low' } });
    expect(model.requests.length).toBe(before);
    expect(await recordsIn(twin.id)).toHaveLength(0);
    const [row] = await db().select().from(users).where(eq(users.id, ada.user.id));
    expect(row).toMatchObject({ credits: 3, creditsHeld: 0 });
  });

  it('holds the rest before calling the model when the context is larger than the opening allowed for, or refuses then', async () => {
    const twin = await buildTwin(db(), { maxCompletionTokens: 1000 });
    const ada = await person({ twin, credits: 10 });
    model.enqueue({ chunks: ['Noted.'], usage: { prompt_tokens: 10, completion_tokens: 10 } });
    // A long first question (about 4,000 bytes): held at its opening, so it is answered.
    const first = await ask(ada.token, { inputs: [`Remember this: ${'x'.repeat(4000)}`] });
    expect(first.status).toBe(200);
    const [afterFirst] = await db().select().from(users).where(eq(users.id, ada.user.id));
    // The second turn continues the conversation: its opening holds ~3.1 of 4 credits, then its prompt
    // turns out to carry the first exchange (~2,000 tokens past the allowance, ~2 credits more): refused.
    await db().update(users).set({ credits: 4 }).where(eq(users.id, ada.user.id));
    const before = model.requests.length;
    const second = await ask(ada.token, { inputs: ['And now?'], requestArgs: { conversationId: first.body.conversationId } });
    expect(second).toMatchObject({ status: 402, body: { code: 'INSUFFICIENT_CREDITS' } });
    expect(model.requests.length).toBe(before);
    const [row] = await db().select().from(users).where(eq(users.id, ada.user.id));
    expect(row).toMatchObject({ credits: 4, creditsHeld: 0 });
    expect(afterFirst.credits).toBeCloseTo(10 - 0.02, 6);
    const records = await db().select().from(history).where(and(eq(history.userId, ada.user.id), eq(history.question, 'And now?')));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 'failed', credits: 0, heldCredits: 0 });
    // With enough, the same turn holds the rest and is answered, charged its real usage.
    await db().update(users).set({ credits: 10 }).where(eq(users.id, ada.user.id));
    model.enqueue({ chunks: ['Yes.'], usage: { prompt_tokens: 4100, completion_tokens: 10 } });
    const third = await ask(ada.token, { inputs: ['And now?'], requestArgs: { conversationId: first.body.conversationId } });
    expect(third).toMatchObject({ status: 200, body: { credits: 4.11 } });
    const [final] = await db().select().from(users).where(eq(users.id, ada.user.id));
    expect(final).toMatchObject({ creditsHeld: 0 });
    expect(final.credits).toBeCloseTo(10 - 4.11, 6);

    // Over SSE the stream is open by then: the refusal comes as an error frame that says why.
    await db().update(users).set({ credits: 4 }).where(eq(users.id, ada.user.id));
    const calls = model.requests.length;
    const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${ada.token}` },
      body: JSON.stringify({ inputs: ['And over SSE?'], requestArgs: { conversationId: first.body.conversationId } }),
    });
    const frames = await readSse(response).rest();
    const historyId = frames[1]?.historyId;
    expect(frames).toEqual([
      { type: 'connected', message: 'Stream established' },
      { type: 'started', historyId, conversationId: first.body.conversationId, seq: 1 },
      { type: 'error', error: { message: 'Your credit balance is too low', code: 'INSUFFICIENT_CREDITS' }, seq: 2, historyId },
      { type: 'done', seq: 3, historyId },
    ]);
    expect(model.requests.length).toBe(calls);
    const [afterSse] = await db().select().from(users).where(eq(users.id, ada.user.id));
    expect(afterSse).toMatchObject({ credits: 4, creditsHeld: 0 });
  });
});

describe('the sweeper of turns whose process died', () => {
  it('ends a turn streaming for longer than any turn runs as failed and gives its hold back, once', async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 5 });
    const ada = await person({ twin });
    const opened = await startRecord(db(), { twinId: twin.id, userId: ada.user.id, question: 'lost', hold: { account: 'institution', amount: 4 } });
    const fresh = await startRecord(db(), { twinId: twin.id, userId: ada.user.id, question: 'running', hold: { account: 'institution', amount: 1 } });
    // Two minutes old against a one-minute limit: the app's own sweep (after each liveness beat, at the
    // fifteen-minute limit) leaves it alone, so the count below is this call's, however slow the run.
    await db().update(history).set({ createdAt: new Date(Date.now() - 2 * 60_000) }).where(eq(history.id, opened.id));
    // Nothing is left to hold until the lost turn's hold comes back.
    expect((await ask(ada.token, { inputs: ['Hi'] })).status).toBe(402);

    expect(await releaseStaleTurns(db(), new Date(), 60_000)).toBe(1);
    expect(await releaseStaleTurns(db(), new Date(), 60_000)).toBe(0);
    const [lost] = await db().select().from(history).where(eq(history.id, opened.id));
    expect(lost).toMatchObject({ status: 'failed', error: STALE_TURN_ERROR, credits: 0, heldCredits: 0 });
    const [running] = await db().select().from(history).where(eq(history.id, fresh.id));
    expect(running).toMatchObject({ status: 'streaming', heldCredits: 1 });
    const [pool] = await db().select().from(twins).where(eq(twins.id, twin.id));
    expect(pool).toMatchObject({ credits: 5, creditsHeld: 1 });
  });
});
