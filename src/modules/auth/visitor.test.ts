// A visitor of an embedded twin end to end: a visitor session (no account, bound to one twin) asks over
// the JSON and SSE routes, paid by the twin's pool and counted by the per-person cap on its own; sees
// its own history and New Conversation; and is refused (403 VISITOR_SCOPE) on every other route.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { readSse } from '../../../test/support/sse-client.js';
import { createMemoryBus } from '../../platform/realtime/bus.js';
import { creditLedger } from '../credits/credits.tables.js';
import { history } from '../history/history.tables.js';
import { twins, type TwinRow } from '../twins/twins.tables.js';
import { findUserById } from '../users/users.repo.js';
import { createProfileService } from '../users/profile.service.js';
import { USAGE_LIMIT_MESSAGES } from '../conversations/turn-limits.js';
import { createAuthService, type AuthService } from './auth.service.js';
import { createSessionCache } from './session-cache.js';
import { sessions } from './sessions.tables.js';
import { createTokenSigner } from './tokens.js';

let t: TestApp;
let model: FakeModelServer;
let auth: AuthService;
let base: string;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', ...PRICED } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // The service the embed route will call, signing with the app's secret.
  const db = t.platform.database.db;
  auth = createAuthService({ db, tokens: createTokenSigner(t.config.jwtSecret), profiles: createProfileService(db), cache: await createSessionCache(createMemoryBus()) });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const db = () => t.platform.database.db;
const client = { ip: '203.0.113.9', userAgent: 'embedding page' };
const visitorOf = (twin: TwinRow) => auth.openVisitorSession(twin.id, client);
const poolOf = async (twinId: string) => (await db().select({ credits: twins.credits }).from(twins).where(eq(twins.id, twinId)))[0].credits;

async function ask(token: string, inputs: string[]) {
  const response = await t.app.inject({ method: 'POST', url: '/api/ai/personal/qanda', headers: { 'x-access-token': token }, payload: { inputs } });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

/** The SSE route over a real connection (the stream stays open until its last frame). */
async function askStream(token: string, inputs: string[]) {
  const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs }),
  });
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) return { status: response.status, type, frames: [], body: await response.json() };
  return { status: response.status, type, frames: await readSse(response).rest(), body: null };
}

const get = (token: string, url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-access-token': token } });

describe('visitor sessions', () => {
  it('opens a session of kind visitor in the twin, naming a generated visitor that is no account', async () => {
    const twin = await buildTwin(db());
    const opened = await visitorOf(twin);
    const [row] = await db().select().from(sessions).where(eq(sessions.userId, opened.visitorId));
    expect(row).toMatchObject({ kind: 'visitor', twinId: twin.id, ip: client.ip });
    expect(await findUserById(db(), opened.visitorId)).toBeUndefined();
    // An inactive twin opens none.
    const closed = await buildTwin(db(), { status: 'inactive' });
    await expect(visitorOf(closed)).rejects.toMatchObject({ status: 404 });
  });

  it("answers a visitor over JSON and SSE, charging the twin's pool and no person", async () => {
    const twin = await buildTwin(db(), { credits: 50, poolCredits: false });
    const ada = await buildUser(db(), { twin, credits: 100 });
    const { token, visitorId } = await visitorOf(twin);

    model.enqueue({ chunks: ['Welcome, ', 'visitor.'], usage: { prompt_tokens: 600, completion_tokens: 400 } });
    const json = await ask(token, ['Hello?']);
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ success: true, answer: 'Welcome, visitor.', credits: 1, cancelled: false });

    model.enqueue({ chunks: ['Streamed ', 'too.'], usage: { prompt_tokens: 500, completion_tokens: 500 } });
    const sse = await askStream(token, ['And streaming?']);
    expect(sse.status).toBe(200);
    expect(sse.type).toMatch(/^text\/event-stream/);
    expect(sse.frames.filter((f) => f.type === 'stream').map((f) => f.delta).join('')).toBe('Streamed too.');
    expect(sse.frames.at(-2)).toMatchObject({ type: 'complete', success: true, outputs: ['Streamed too.'], credits: 1 });
    expect(sse.frames.at(-1)).toEqual({ type: 'done', seq: 5, historyId: sse.frames.at(-2)!.historyId });

    expect(await poolOf(twin.id)).toBeCloseTo(48, 6);
    expect((await findUserById(db(), ada.user.id))!.credits).toBe(100);
    const ledger = await db().select().from(creditLedger).where(eq(creditLedger.twinId, twin.id));
    expect(ledger.map((row) => ({ account: row.account, userId: row.userId }))).toEqual([
      { account: 'institution', userId: null },
      { account: 'institution', userId: null },
    ]);
    const records = await db().select().from(history).where(eq(history.twinId, twin.id));
    expect(records.map((row) => row.userId)).toEqual([visitorId, visitorId]);
  });

  it('counts each visitor session under the per-person cap on its own', async () => {
    const twin = await buildTwin(db(), { credits: 50, userDailyLimit: 1 });
    const first = await visitorOf(twin);
    expect((await ask(first.token, ['One'])).status).toBe(200);
    const capped = await ask(first.token, ['Two']);
    expect(capped).toEqual({ status: 429, body: { success: false, message: USAGE_LIMIT_MESSAGES.user, code: 'USAGE_LIMIT_REACHED', scope: 'user', limit: 1 } });
    const second = await visitorOf(twin);
    expect((await ask(second.token, ['One'])).status).toBe(200);
  });

  it("refuses a visitor when the twin's pool is empty (402), before calling the model", async () => {
    const twin = await buildTwin(db(), { credits: 0 });
    const { token, visitorId } = await visitorOf(twin);
    const before = model.requests.length;
    const answer = await ask(token, ['Hi']);
    expect(answer).toMatchObject({ status: 402, body: { success: false, code: 'INSUFFICIENT_CREDITS', message: "This Digital Twin's credit balance is too low" } });
    const streamed = await askStream(token, ['Hi']);
    expect(streamed).toMatchObject({ status: 402, body: { code: 'INSUFFICIENT_CREDITS' } });
    expect(model.requests.length).toBe(before);
    expect(await db().select().from(history).where(eq(history.userId, visitorId))).toEqual([]);
  });

  it('refuses a visitor on every route that does not serve visitors with 403 VISITOR_SCOPE', async () => {
    const twin = await buildTwin(db());
    const { token } = await visitorOf(twin);
    const refused = { success: false, code: 'VISITOR_SCOPE', message: 'This route is not available to visitors of an embedded twin' };
    for (const [method, url] of [
      ['GET', '/api/user/memory'],
      ['GET', '/api/user/files'],
      ['GET', '/api/admin/sessions'],
      ['POST', '/api/user/refresh/profile'],
      ['GET', '/api/user/setting'],
      ['GET', '/api/user/history/0123456789abcdef01234567'],
    ] as const) {
      const response = await t.app.inject({ method, url, headers: { 'x-access-token': token } });
      expect({ url, status: response.statusCode, body: response.json() }).toMatchObject({ url, status: 403, body: refused });
    }
  });

  it('lists New Conversation as the assistants a visitor may pick', async () => {
    const twin = await buildTwin(db());
    const { token } = await visitorOf(twin);
    const response = await get(token, '/api/user/assistants');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, data: [{ name: 'New Conversation', canEdit: false }] });
  });

  it("lists only the visitor's own records of its twin, never another visitor's, a person's or another twin's", async () => {
    const twinA = await buildTwin(db(), { credits: 50 });
    const twinB = await buildTwin(db(), { credits: 50 });
    const ada = await buildUser(db(), { twin: twinA, credits: 50 });
    const mine = await visitorOf(twinA);
    const other = await visitorOf(twinA);
    const elsewhere = await visitorOf(twinB);
    const adaToken = await signIn(t.app, ada.user.email);
    for (const [token, question] of [
      [mine.token, 'Mine'],
      [other.token, 'Other visitor'],
      [elsewhere.token, 'Twin B'],
      [adaToken, 'Ada'],
    ]) {
      expect((await ask(token, [question])).status).toBe(200);
    }
    const listed = await get(mine.token, '/api/user/history');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toMatchObject({ success: true, total: 1, data: [{ question: 'Mine' }] });
    const inB = await get(elsewhere.token, '/api/user/history');
    expect(inB.json()).toMatchObject({ total: 1, data: [{ question: 'Twin B' }] });
    // The person's own list is untouched by the visitors of their twin.
    expect((await get(adaToken, '/api/user/history')).json()).toMatchObject({ total: 1, data: [{ question: 'Ada' }] });
  });

  it('refuses a visitor token once its session is revoked, and never lets it open a socket-bound turn', async () => {
    const twin = await buildTwin(db(), { credits: 50 });
    const { token, visitorId } = await visitorOf(twin);
    const socketBound = await t.app.inject({
      method: 'POST',
      url: '/api/ai/personal/qanda',
      headers: { 'x-access-token': token },
      payload: { inputs: ['Hi'], requestArgs: { socketId: 'someone-elses-socket' } },
    });
    expect(socketBound.json()).toEqual({ success: true, streamingFailed: true });
    await db().update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.userId, visitorId));
    // A fresh service (no cached caller) sees the revoked session.
    const fresh = createAuthService({ db: db(), tokens: createTokenSigner(t.config.jwtSecret), profiles: createProfileService(db()), cache: await createSessionCache(createMemoryBus()) });
    expect(await fresh.verifyCaller(token)).toBeNull();
  });
});
