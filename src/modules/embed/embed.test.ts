// Embed sessions end to end: a page on an authorized origin opens a visitor session that asks through
// the Q&A route on the twin's pool; every other origin, a missing one and an empty list are refused;
// unknown and inactive twins answer 404; each session is its own visitor; an address is throttled; a
// launch token of the twin opens a launch session and one of another twin is refused, unused.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { post } from '../../../test/support/identity.js';
import { sessions } from '../auth/sessions.tables.js';
import { USAGE_LIMIT_MESSAGES } from '../conversations/turn-limits.js';
import { history } from '../history/history.tables.js';
import { twins, type TwinRow } from '../twins/twins.tables.js';
import { isAuthorizedOrigin } from './embed.service.js';

const SESSIONS_PER_HOUR = 3;
const PAGE = 'https://school.example';

let t: TestApp;
let model: FakeModelServer;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({
    env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', EMBED_SESSIONS_PER_HOUR: String(SESSIONS_PER_HOUR), ...PRICED },
  });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const db = () => t.platform.database.db;
// Each test speaks from its own address, so the per-address throttle of one never reaches another.
let addresses = 0;
const newAddress = () => `198.51.100.${++addresses}`;

function openSession(body: Record<string, unknown>, { origin, address = newAddress() }: { origin?: string; address?: string } = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/agent/embed/session',
    headers: origin ? { origin } : {},
    remoteAddress: address,
    payload: body,
  });
}

const embeddable = (overrides: Partial<TwinRow> = {}) => buildTwin(db(), { publicAuthorizedUrls: [`${PAGE}/courses/`], credits: 50, ...overrides });

async function visitorToken(twin: TwinRow): Promise<string> {
  const response = await openSession({ publicId: twin.publicId }, { origin: PAGE });
  expect(response.statusCode).toBe(200);
  expect(response.json()).toEqual({ success: true, token: expect.any(String), visitor: true });
  return response.json().token as string;
}

async function ask(token: string, question: string) {
  const response = await t.app.inject({ method: 'POST', url: '/api/ai/personal/qanda', headers: { 'x-access-token': token }, payload: { inputs: [question] } });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

const refusedOrigin = { success: false, code: 'ORIGIN_NOT_ALLOWED', message: 'This page may not embed this Digital Twin' };

describe('POST /api/agent/embed/session', () => {
  it("gives a page on an authorized origin a visitor token that asks on the twin's pool", async () => {
    const twin = await embeddable();
    const token = await visitorToken(twin);
    model.enqueue({ chunks: ['Hello from ', 'the twin.'], usage: { prompt_tokens: 600, completion_tokens: 400 } });
    const answer = await ask(token, 'Who are you?');
    expect(answer).toMatchObject({ status: 200, body: { success: true, answer: 'Hello from the twin.', credits: 1 } });
    const [pool] = await db().select({ credits: twins.credits }).from(twins).where(eq(twins.id, twin.id));
    expect(pool.credits).toBeCloseTo(49, 6);
    // A visitor stays a visitor: a person's route is refused.
    const memory = await t.app.inject({ method: 'GET', url: '/api/user/memory', headers: { 'x-access-token': token } });
    expect(memory.statusCode).toBe(403);
    expect(memory.json().code).toBe('VISITOR_SCOPE');
  });

  it('refuses any other origin, no origin, and every origin when the list is empty (403 ORIGIN_NOT_ALLOWED)', async () => {
    const twin = await embeddable();
    for (const origin of ['https://evil.example', 'http://school.example', 'https://school.example:8443', 'https://sub.school.example', 'null', undefined]) {
      const response = await openSession({ publicId: twin.publicId }, { origin });
      expect({ origin, status: response.statusCode, body: response.json() }).toEqual({ origin, status: 403, body: refusedOrigin });
    }
    const nowhere = await embeddable({ publicAuthorizedUrls: [] });
    const response = await openSession({ publicId: nowhere.publicId }, { origin: PAGE });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(refusedOrigin);
    expect(await db().select().from(sessions).where(eq(sessions.twinId, nowhere.id))).toEqual([]);
  });

  it('answers 404 for an unknown or inactive twin, whatever the origin', async () => {
    const unknown = await openSession({ publicId: '00000000-0000-4000-8000-000000000000' }, { origin: PAGE });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ success: false, message: 'Digital Twin not found' });
    const inactive = await embeddable({ status: 'inactive' });
    const closed = await openSession({ publicId: inactive.publicId }, { origin: PAGE });
    expect(closed.statusCode).toBe(404);
    expect(closed.json()).toMatchObject({ success: false, message: 'Digital Twin not found' });
  });

  it('makes each session its own visitor, counted on its own by the per-person cap', async () => {
    const twin = await embeddable({ userDailyLimit: 1 });
    const first = await visitorToken(twin);
    const second = await visitorToken(twin);
    model.enqueue({ chunks: ['One.'] });
    expect((await ask(first, 'One')).status).toBe(200);
    expect(await ask(first, 'Two')).toMatchObject({ status: 429, body: { code: 'USAGE_LIMIT_REACHED', scope: 'user', message: USAGE_LIMIT_MESSAGES.user } });
    model.enqueue({ chunks: ['One again.'] });
    expect((await ask(second, 'One')).status).toBe(200);
    const visitors = await db().select({ userId: sessions.userId, kind: sessions.kind }).from(sessions).where(eq(sessions.twinId, twin.id));
    expect(visitors).toHaveLength(2);
    expect(visitors.every((row) => row.kind === 'visitor')).toBe(true);
    expect(new Set(visitors.map((row) => row.userId)).size).toBe(2);
    const records = await db().select({ userId: history.userId }).from(history).where(eq(history.twinId, twin.id));
    expect(new Set(records.map((row) => row.userId)).size).toBe(2);
  });

  it('answers 429 to an address past EMBED_SESSIONS_PER_HOUR, and not to another address', async () => {
    const twin = await embeddable();
    const address = newAddress();
    for (let i = 0; i < SESSIONS_PER_HOUR; i += 1) {
      expect((await openSession({ publicId: twin.publicId }, { origin: PAGE, address })).statusCode).toBe(200);
    }
    const throttled = await openSession({ publicId: twin.publicId }, { origin: PAGE, address });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toMatchObject({ success: false, message: expect.any(String), code: 'RATE_LIMITED' });
    expect((await openSession({ publicId: twin.publicId }, { origin: PAGE })).statusCode).toBe(200);
  });

  it("opens a launch session with a launch token of the twin, and refuses another twin's token, leaving it unused", async () => {
    const twin = await embeddable();
    const admin = await buildUser(db(), { twin, role: 'admin' });
    const adminToken = await signIn(t.app, admin.user.email);
    const email = `embedded-${Date.now()}@example.test`;
    const signed = await post(t.app, '/api/auth/sdk-sign', { email, fname: 'Grace', lname: 'Hopper' }, adminToken);
    expect(signed.statusCode).toBe(200);
    const launched = await openSession({ publicId: twin.publicId, launchToken: signed.json().token }, { origin: PAGE });
    expect(launched.statusCode).toBe(200);
    expect(launched.json()).toMatchObject({ success: true, visitor: false, launchScope: true, token: expect.any(String), profile: { email } });
    const [row] = await db().select({ kind: sessions.kind, twinId: sessions.twinId }).from(sessions).where(eq(sessions.userId, launched.json().profile._id));
    expect(row).toEqual({ kind: 'launch', twinId: twin.id });

    const other = await embeddable();
    const otherAdmin = await buildUser(db(), { twin: other, role: 'admin' });
    const foreign = await post(t.app, '/api/auth/sdk-sign', { email: `foreign-${Date.now()}@example.test` }, await signIn(t.app, otherAdmin.user.email));
    const refused = await openSession({ publicId: twin.publicId, launchToken: foreign.json().token }, { origin: PAGE });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ success: false, code: 'LAUNCH_TOKEN_OTHER_TWIN', message: 'This launch token was signed for another Digital Twin' });
    // Still good on its own twin's page.
    expect((await openSession({ publicId: other.publicId, launchToken: foreign.json().token }, { origin: PAGE })).statusCode).toBe(200);
    // A token never issued is refused as invalid.
    const forged = await openSession({ publicId: twin.publicId, launchToken: 'lt_forged' }, { origin: PAGE });
    expect(forged.statusCode).toBe(401);
    expect(forged.json().code).toBe('INVALID_LAUNCH_TOKEN');
  });

  it('answers 400 in the failure shape for a missing or malformed publicId or launch token', async () => {
    for (const body of [{}, { publicId: 'not-a-uuid' }, { publicId: 42 }, { publicId: '00000000-0000-4000-8000-000000000000', launchToken: '' }]) {
      const response = await openSession(body, { origin: PAGE });
      expect({ body, status: response.statusCode }).toEqual({ body, status: 400 });
      expect(response.json()).toMatchObject({ success: false, message: expect.any(String), code: 'VALIDATION_FAILED' });
    }
  });
});

describe('isAuthorizedOrigin', () => {
  it('compares scheme, host and port, ignoring the path of the authorized URL', () => {
    expect(isAuthorizedOrigin('https://a.example', ['https://a.example/some/page'])).toBe(true);
    expect(isAuthorizedOrigin('https://a.example:443', ['https://a.example'])).toBe(true);
    expect(isAuthorizedOrigin('https://a.example', ['https://a.example:444'])).toBe(false);
    expect(isAuthorizedOrigin('https://a.example', ['not a url', 'javascript:alert(1)'])).toBe(false);
    expect(isAuthorizedOrigin('https://a.example', [])).toBe(false);
  });
});
