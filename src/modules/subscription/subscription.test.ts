// The subscription connection of a twin (contract-additions, "Subscription connection of a twin"),
// against a real authorization server with the device grant (oidc-provider on loopback, the person's
// approval scripted over its device pages) and two fake OpenAI-compatible model APIs: the deployment's,
// and the subscription's, which accepts only access tokens that provider issued to this service
// (it introspects them). The app's log is captured: no token may appear in it or in any response.
import { Writable } from 'node:stream';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { actorFor, buildAssistant } from '../../../test/support/assistants.js';
import { DEVICE_CLIENT_ID, startDeviceProvider, type TestDeviceProvider } from '../../../test/support/device-provider.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { askQanda } from '../../../test/support/http.js';
import { until } from '../../../test/support/until.js';
import { insertMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { updateUser } from '../users/users.repo.js';
import { createSubscriptionProvider } from './subscription.provider.js';
import { createSubscriptionService, SUBSCRIPTION_MESSAGES } from './subscription.service.js';
import { subscriptionConnections } from './subscription.tables.js';
import { createTokenKeeper } from './subscription.tokens.js';

const BASE = '/api/user/agents/connect/subscription';

let t: TestApp;
let idp: TestDeviceProvider;
let deployment: FakeModelServer;
let subscriptionApi: FakeModelServer;
let base: string;
let twin: TwinRow;
const tok = {} as Record<'admin' | 'member' | 'adminElsewhere' | 'otherAdmin' | 'super' | 'noTwin', string>;
/** Every line the app logged, and every response body the tests received. */
const logged: string[] = [];
const bodies: string[] = [];
/** Every token the tests saw the service hold or send (refresh tokens read from its row, access tokens as the model API got them). */
const knownTokens = new Set<string>();

const logStream = new Writable({
  write(chunk, _encoding, done) {
    logged.push(String(chunk));
    done();
  },
});

function subscriptionEnv(issuer: string): Record<string, string> {
  return {
    OPENAI_BASE_URL: deployment.url,
    OPENAI_API_KEY: 'deployment-key',
    DEFAULT_MODEL: 'deployment-model',
    SUBSCRIPTION_ISSUER: issuer,
    SUBSCRIPTION_CLIENT_ID: DEVICE_CLIENT_ID,
    SUBSCRIPTION_API_BASE: subscriptionApi.url,
    SUBSCRIPTION_MODEL: 'subscription-model',
    // The deployment's endpoint costs credits, so a turn that is free shows it did not go there.
    ...PRICED,
    // A twin's custom model below is a loopback server: the operator allows its host (the deployment's
    // and the subscription's URLs are configuration, trusted whatever this says).
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
  };
}

beforeAll(async () => {
  idp = await startDeviceProvider();
  deployment = await startFakeModelServer({ authorize: (header) => header === 'Bearer deployment-key' });
  subscriptionApi = await startFakeModelServer({
    authorize: async (header) => Boolean(header?.startsWith('Bearer ')) && idp.isServiceAccessToken(header!.slice('Bearer '.length)),
  });
  const usage = { prompt_tokens: 500, completion_tokens: 500 };
  deployment.setDefault({ chunks: ['From the deployment.'], usage });
  subscriptionApi.setDefault({ chunks: ['From the subscription.'], usage });
  t = await startTestApp({ env: subscriptionEnv(idp.issuer), logger: { level: 'debug', stream: logStream } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const db = t.platform.database.db;
  twin = await buildTwin(db);
  const other = await buildTwin(db);
  const sign = async (options: Parameters<typeof buildUser>[1]) => signIn(t.app, (await buildUser(db, options)).user.email);
  tok.admin = await sign({ twin, role: 'admin' });
  tok.member = await sign({ twin, grants: ['models.edit', 'institutions.edit'], credits: 1_000 });
  tok.otherAdmin = await sign({ twin: other, role: 'admin' });
  // An administrator of the other twin, working in this one as a plain member.
  const elsewhere = await buildUser(db, { twin: other, role: 'admin' });
  await insertMembership(db, { twinId: twin.id, userId: elsewhere.user.id, role: 'user', permissions: [] });
  await updateUser(db, elsewhere.user.id, { currentTwinId: twin.id });
  tok.adminElsewhere = await signIn(t.app, elsewhere.user.email);
  tok.super = await sign({ twin, accountType: 'super' });
  tok.noTwin = await sign({ twin: null });
});

afterAll(async () => {
  await t?.close();
  await Promise.all([idp?.close(), deployment?.close(), subscriptionApi?.close()]);
});

beforeEach(async () => {
  await call(tok.admin, 'POST', 'disconnect');
});

async function call(token: string, method: 'GET' | 'POST', action: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await t.app.inject({ method, url: `${BASE}/${action}`, headers: { 'x-access-token': token }, ...(method === 'POST' ? { payload: {} } : {}) });
  bodies.push(response.body);
  return { status: response.statusCode, body: response.json() };
}

const row = async (twinId = twin.id) =>
  (await t.platform.database.db.select().from(subscriptionConnections).where(eq(subscriptionConnections.twinId, twinId)))[0];

/** As if the poll interval had passed (the provider's interval is 5 s; the tests do not sleep through it). */
const intervalPassed = () =>
  t.platform.database.db.update(subscriptionConnections).set({ pendingNextPollAt: sql`now() - interval '1 second'` }).where(eq(subscriptionConnections.twinId, twin.id));

async function ask(question: string, extra: Record<string, unknown> = {}) {
  const answer = await askQanda(base, tok.member, { inputs: [question], requestArgs: extra });
  bodies.push(JSON.stringify(answer.body));
  return answer;
}

/** Start, the person approves at the verification URI, poll: connected. */
async function connect(subject = 'subscriber-1'): Promise<void> {
  const started = await call(tok.admin, 'POST', 'start');
  expect(started.status).toBe(200);
  await idp.approve(started.body.verificationUriComplete as string, subject);
  await intervalPassed();
  expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: true, pending: false } });
}

/** The tokens the service holds for the twin, decrypted (to prove they never show anywhere). */
async function storedTokens(): Promise<string[]> {
  const current = await row();
  const tokens = [current?.accessTokenSealed, current?.refreshTokenSealed].filter((value): value is string => Boolean(value)).map((sealed) => t.platform.secrets.decrypt(sealed));
  for (const token of tokens) knownTokens.add(token);
  return tokens;
}

describe('the whole journey on one process', () => {
  it('starts, is approved at the verification URI, polls connected, answers from the subscription, and after disconnect from the deployment', async () => {
    expect(await call(tok.admin, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: false } });

    const started = await call(tok.admin, 'POST', 'start');
    expect(started.status).toBe(200);
    expect(started.body).toEqual({
      success: true,
      userCode: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
      verificationUri: `${idp.issuer}/device`,
      verificationUriComplete: expect.stringContaining(`${idp.issuer}/device?user_code=`),
      expiresAt: expect.any(String),
      interval: 5,
    });
    const expiresIn = Date.parse(started.body.expiresAt as string) - Date.now();
    expect(expiresIn).toBeGreaterThan(590_000);
    expect(expiresIn).toBeLessThanOrEqual(600_000);

    // Before the person acts: pending, and a second poll within the interval does not reach the provider.
    const before = idp.tokenRequests;
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: false, pending: true } });
    expect(idp.tokenRequests).toBe(before + 1);
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: false, pending: true } });
    expect(idp.tokenRequests).toBe(before + 1);

    await idp.approve(started.body.verificationUriComplete as string, 'subscriber-1');
    await intervalPassed();
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: true, pending: false } });
    expect(await call(tok.admin, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: true } });
    expect(await call(tok.admin, 'POST', 'poll')).toMatchObject({ status: 400, body: { code: 'NO_PENDING' } });

    // Stored encrypted: the row holds sealed values only, the account among them.
    const stored = (await row())!;
    expect(stored.accessTokenSealed).toMatch(/^v1\./);
    expect(stored.refreshTokenSealed).toMatch(/^v1\./);
    expect(t.platform.secrets.decrypt(stored.accountSealed!)).toBe('subscriber-1');
    expect(stored.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_000_000);

    // A member's turn now uses the subscription's model with the twin's token, and costs no credits.
    const viaSubscription = subscriptionApi.requests.length;
    const answer = await ask('Which model?');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, answer: 'From the subscription.', credits: 0 });
    expect(subscriptionApi.requests.length).toBe(viaSubscription + 1);
    expect(subscriptionApi.requests.at(-1)!.model).toBe('subscription-model');

    // Disconnect: the next turn uses the deployment's endpoint again, and the provider is told to forget the tokens.
    const [access] = await storedTokens();
    expect(await idp.isServiceAccessToken(access)).toBe(true);
    expect(await call(tok.admin, 'POST', 'disconnect')).toEqual({ status: 200, body: { success: true, connected: false } });
    expect(await row()).toBeUndefined();
    await until(async () => !(await idp.isServiceAccessToken(access)));
    expect(await call(tok.admin, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: false } });
    const viaDeployment = deployment.requests.length;
    expect((await ask('And now?')).body).toMatchObject({ success: true, answer: 'From the deployment.', credits: 1 });
    expect(deployment.requests.length).toBe(viaDeployment + 1);
    expect(deployment.requests.at(-1)!.model).toBe('deployment-model');
    expect(subscriptionApi.requests.length).toBe(viaSubscription + 1);
  });

  it("sends an assistant's own model name to the subscription, but an assistant naming a custom model keeps its custom model", async () => {
    await connect();
    const named = await buildAssistant(t.platform.database.db, { twinId: twin.id, twinShared: true, conversationModel: 'subscription-large' });
    expect((await ask('Hi', { assistantId: named.id })).body).toMatchObject({ answer: 'From the subscription.' });
    expect(subscriptionApi.requests.at(-1)!.model).toBe('subscription-large');

    const custom = await startFakeModelServer();
    custom.setDefault({ chunks: ['From the custom model.'] });
    try {
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/admin/ai-model',
        headers: { 'x-access-token': tok.admin },
        payload: { name: 'Twin Custom', model: 'custom-id', baseUrl: custom.url, apiKey: 'custom-key' },
      });
      expect(created.statusCode).toBe(201);
      const customAssistant = await buildAssistant(t.platform.database.db, { twinId: twin.id, twinShared: true, conversationModel: 'Twin Custom' });
      const before = subscriptionApi.requests.length;
      expect((await ask('Hi', { assistantId: customAssistant.id })).body).toMatchObject({ answer: 'From the custom model.' });
      expect(custom.requests.at(-1)!.model).toBe('custom-id');
      expect(subscriptionApi.requests.length).toBe(before);
    } finally {
      await custom.close();
    }
  });

  it('a new start replaces the pending sign-in; the connection in place keeps serving until the new one succeeds', async () => {
    await connect('subscriber-1');
    const first = await call(tok.admin, 'POST', 'start');
    const second = await call(tok.admin, 'POST', 'start');
    expect(second.body.userCode).not.toBe(first.body.userCode);
    expect(await call(tok.admin, 'GET', 'status')).toMatchObject({ body: { connected: true } });
    // Approving the replaced code connects nothing: only the newest sign-in is polled.
    await idp.approve(first.body.verificationUriComplete as string, 'someone-else');
    await intervalPassed();
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: true, pending: true } });
    expect(t.platform.secrets.decrypt((await row())!.accountSealed!)).toBe('subscriber-1');
    await idp.approve(second.body.verificationUriComplete as string, 'subscriber-2');
    await intervalPassed();
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: true, pending: false } });
    expect(t.platform.secrets.decrypt((await row())!.accountSealed!)).toBe('subscriber-2');
  });

  it('honours slow_down: the interval grows by 5 seconds', async () => {
    await call(tok.admin, 'POST', 'start');
    idp.slowDownNext();
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: false, pending: true } });
    const pending = (await row())!;
    expect(pending.pendingIntervalSeconds).toBe(10);
    const wait = pending.pendingNextPollAt!.getTime() - Date.now();
    expect(wait).toBeGreaterThan(8_000);
    expect(wait).toBeLessThanOrEqual(10_000);
  });

  it('refreshes the access token before it expires, and a refused refresh leaves the twin not connected', async () => {
    await connect();
    const [oldAccess, oldRefresh] = await storedTokens();
    // Due for refresh: the token expires within the margin.
    await t.platform.database.db.update(subscriptionConnections).set({ tokenExpiresAt: new Date(Date.now() + 30_000) }).where(eq(subscriptionConnections.twinId, twin.id));
    expect((await ask('Refreshed?')).body).toMatchObject({ answer: 'From the subscription.' });
    const [newAccess, newRefresh] = await storedTokens();
    expect(newAccess).not.toBe(oldAccess);
    expect(newRefresh).not.toBe(oldRefresh);
    expect(subscriptionApi.requests.at(-1)!.headers.authorization).toBe(`Bearer ${newAccess}`);
    expect((await row())!.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3_000_000);

    // The provider refuses the next refresh (the refresh token was revoked there).
    await idp.revoke(newRefresh);
    await t.platform.database.db.update(subscriptionConnections).set({ tokenExpiresAt: new Date(Date.now() + 30_000) }).where(eq(subscriptionConnections.twinId, twin.id));
    expect(await call(tok.admin, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: false } });
    expect((await row())!.refreshFailedAt).not.toBeNull();
    const before = subscriptionApi.requests.length;
    expect((await ask('Still?')).body).toMatchObject({ answer: 'From the deployment.' });
    expect(subscriptionApi.requests.length).toBe(before);
  });
});

describe("the profile's twin", () => {
  it('shows whether a subscription is connected, as a boolean only, also from a cached profile', async () => {
    const profile = async () => {
      const response = await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': tok.member } });
      bodies.push(response.body);
      expect(response.statusCode).toBe(200);
      return response.json().profile.institution;
    };
    expect((await profile()).subscriptionConnected).toBe(false);
    expect((await profile()).subscriptionConnected).toBe(false); // cached now
    await connect();
    expect((await profile()).subscriptionConnected).toBe(true);
    await call(tok.admin, 'POST', 'disconnect');
    expect((await profile()).subscriptionConnected).toBe(false);
    const twinFields = Object.keys(await profile()).filter((key) => /subscription/i.test(key));
    expect(twinFields).toEqual(['subscriptionConnected']);
  });
});

describe('who may', () => {
  it("refuses a plain member (even with grants) and another twin's administrator working here as a member: 403 NOT_TWIN_ADMIN, nothing changes", async () => {
    await connect();
    const before = await row();
    for (const token of [tok.member, tok.adminElsewhere]) {
      for (const [method, action] of [['POST', 'start'], ['POST', 'poll'], ['GET', 'status'], ['POST', 'disconnect']] as const) {
        const answer = await call(token, method, action);
        expect(answer, action).toEqual({ status: 403, body: { success: false, code: 'NOT_TWIN_ADMIN', message: SUBSCRIPTION_MESSAGES.notAdmin } });
      }
    }
    expect(await row()).toEqual(before);
    expect(await call(tok.admin, 'GET', 'status')).toMatchObject({ body: { connected: true } });
  });

  it("another twin's administrator acts on their own twin only: ours stays connected and unused by theirs", async () => {
    await connect();
    expect(await call(tok.otherAdmin, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: false } });
    expect(await call(tok.otherAdmin, 'POST', 'disconnect')).toEqual({ status: 200, body: { success: true, connected: false } });
    expect(await call(tok.otherAdmin, 'POST', 'poll')).toMatchObject({ status: 400, body: { code: 'NO_PENDING' } });
    expect(await call(tok.admin, 'GET', 'status')).toMatchObject({ body: { connected: true } });
    expect((await row())!.accessTokenSealed).not.toBeNull();
  });

  it('lets a super admin working in the twin act; a caller without a twin gets 404', async () => {
    expect(await call(tok.super, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: false } });
    for (const [method, action] of [['POST', 'start'], ['POST', 'poll'], ['GET', 'status'], ['POST', 'disconnect']] as const) {
      expect((await call(tok.noTwin, method, action)).status).toBe(404);
    }
  });

  it('answers 401 without a token', async () => {
    expect((await t.app.inject({ method: 'GET', url: `${BASE}/status` })).statusCode).toBe(401);
  });
});

describe('each coded failure, provoked for real', () => {
  it('NO_PENDING: poll with nothing started', async () => {
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 400, body: { success: false, code: 'NO_PENDING', message: SUBSCRIPTION_MESSAGES.noPending } });
  });

  it('DEVICE_AUTH_FAILED: the person declines at the consent step; the sign-in is over', async () => {
    const started = await call(tok.admin, 'POST', 'start');
    await idp.decline(started.body.verificationUriComplete as string, 'subscriber-1');
    await intervalPassed();
    expect(await call(tok.admin, 'POST', 'poll')).toEqual({ status: 400, body: { success: false, code: 'DEVICE_AUTH_FAILED', message: SUBSCRIPTION_MESSAGES.declined } });
    expect(await call(tok.admin, 'POST', 'poll')).toMatchObject({ status: 400, body: { code: 'NO_PENDING' } });
    expect(logged.some((line) => line.includes('subscription sign-in declined') && line.includes('access_denied'))).toBe(true);
  });

  /**
   * The service on this test's database with another provider configuration (no app to boot for each):
   * the same code the routes call, the answer the routes would send given by the error's status and code.
   */
  async function serviceAt(issuer: string | undefined) {
    const db = t.platform.database.db;
    const admin = await buildUser(db, { role: 'admin' });
    const actor = await actorFor(db, admin.user.id);
    const config = issuer ? { issuer, clientId: DEVICE_CLIENT_ID, apiBase: subscriptionApi.url, scope: 'openid offline_access' } : undefined;
    const provider = config ? createSubscriptionProvider(config) : undefined;
    const log = { warn: (details: object, message: string) => void logged.push(JSON.stringify({ ...details, msg: message })) };
    const keeper = provider ? createTokenKeeper({ db, secrets: t.platform.secrets, provider, log }) : undefined;
    const service = createSubscriptionService({ db, secrets: t.platform.secrets, provider, keeper, log });
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => ({ status: 200 }),
        (error: { status: number; code: string; message: string }) => ({ status: error.status, code: error.code, message: error.message }),
      );
    return { service, keeper, actor, failure, twinId: admin.twin!.id };
  }

  it('EXPIRED: the code expired before the person acted (found by the service, and said by the provider)', async () => {
    const quick = await startDeviceProvider({ deviceCodeTtlSeconds: 1 });
    try {
      const { service, actor, failure, twinId } = await serviceAt(quick.issuer);
      await service.start(actor);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await failure(service.poll(actor))).toEqual({ status: 410, code: 'EXPIRED', message: SUBSCRIPTION_MESSAGES.expired });
      expect(await failure(service.poll(actor))).toMatchObject({ status: 400, code: 'NO_PENDING' });
      // A clock behind the provider's: the service still thinks the code valid, the provider answers expired_token.
      await service.start(actor);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const requests = quick.tokenRequests;
      await t.platform.database.db.update(subscriptionConnections).set({ pendingExpiresAt: new Date(Date.now() + 60_000) }).where(eq(subscriptionConnections.twinId, twinId));
      expect(await failure(service.poll(actor))).toEqual({ status: 410, code: 'EXPIRED', message: SUBSCRIPTION_MESSAGES.expired });
      expect(quick.tokenRequests).toBe(requests + 1);
    } finally {
      await quick.close();
    }
  });

  it('DEVICE_AUTH_DISABLED: a deployment without a subscription configured, a provider without the device grant, one refusing it to this client', async () => {
    const unconfigured = await serviceAt(undefined);
    expect(await unconfigured.failure(unconfigured.service.start(unconfigured.actor))).toEqual({ status: 503, code: 'DEVICE_AUTH_DISABLED', message: SUBSCRIPTION_MESSAGES.notConfigured });
    const without = await startDeviceProvider({ deviceFlow: false });
    try {
      const { service, actor, failure } = await serviceAt(without.issuer);
      expect(await failure(service.start(actor))).toEqual({ status: 503, code: 'DEVICE_AUTH_DISABLED', message: SUBSCRIPTION_MESSAGES.refused });
      expect(without.deviceRequests).toBe(0);
    } finally {
      await without.close();
    }
    const refusing = await startDeviceProvider({ deviceGrantForClient: false });
    try {
      const { service, actor, failure } = await serviceAt(refusing.issuer);
      expect(await failure(service.start(actor))).toEqual({ status: 503, code: 'DEVICE_AUTH_DISABLED', message: SUBSCRIPTION_MESSAGES.refused });
      expect(refusing.deviceRequests).toBe(1);
      expect(logged.some((line) => line.includes('subscription device authorization failed') && line.includes('device_code is not allowed for this client'))).toBe(true);
    } finally {
      await refusing.close();
    }
  });

  it('START_FAILED and POLL_FAILED: the provider is down', async () => {
    const down = await startDeviceProvider();
    await down.close();
    const neverUp = await serviceAt(down.issuer);
    expect(await neverUp.failure(neverUp.service.start(neverUp.actor))).toEqual({ status: 502, code: 'START_FAILED', message: SUBSCRIPTION_MESSAGES.startFailed });

    const flaky = await startDeviceProvider();
    const { service, actor, failure, twinId } = await serviceAt(flaky.issuer);
    await service.start(actor);
    await flaky.close();
    expect(await failure(service.poll(actor))).toEqual({ status: 502, code: 'POLL_FAILED', message: SUBSCRIPTION_MESSAGES.pollFailed });
    // The sign-in stays pending (a later poll may still succeed); a new start fails the same way.
    expect((await row(twinId))!.pendingDeviceCodeSealed).not.toBeNull();
    expect(await failure(service.start(actor))).toMatchObject({ status: 502, code: 'START_FAILED' });
    expect(logged.some((line) => line.includes('subscription poll failed') && line.includes('fetch failed'))).toBe(true);
  });

  it('a refresh that cannot reach the provider keeps the valid token (tried again after a pause), never marks the connection', async () => {
    const flaky = await startDeviceProvider();
    const { service, keeper, actor, twinId } = await serviceAt(flaky.issuer);
    const started = await service.start(actor);
    await flaky.approve(started.verificationUriComplete!, 'subscriber-9');
    await t.platform.database.db.update(subscriptionConnections).set({ pendingNextPollAt: sql`now() - interval '1 second'` }).where(eq(subscriptionConnections.twinId, twinId));
    expect(await service.poll(actor)).toEqual({ connected: true, pending: false });
    const access = t.platform.secrets.decrypt((await row(twinId))!.accessTokenSealed!);
    await flaky.close();
    await t.platform.database.db.update(subscriptionConnections).set({ tokenExpiresAt: new Date(Date.now() + 30_000) }).where(eq(subscriptionConnections.twinId, twinId));
    const failures = () => logged.filter((line) => line.includes(twinId) && line.includes('subscription refresh failed')).length;
    expect(await keeper!.accessToken(twinId)).toBe(access);
    expect(failures()).toBe(1);
    expect(await keeper!.accessToken(twinId)).toBe(access); // within the pause: not tried again
    expect(failures()).toBe(1);
    expect(await service.status(actor)).toEqual({ connected: true });
    expect((await row(twinId))!.refreshFailedAt).toBeNull();
    // Expired while the provider is away: not usable now, but not marked (it may come back).
    await t.platform.database.db.update(subscriptionConnections).set({ tokenExpiresAt: new Date(Date.now() - 1_000) }).where(eq(subscriptionConnections.twinId, twinId));
    expect(await service.status(actor)).toEqual({ connected: false });
    expect((await row(twinId))!.refreshFailedAt).toBeNull();
  });

  // A database failure: the connection table is renamed away for the length of the request (DDL, on the
  // test's own database), so the statement fails as it would with the table missing; then renamed back.
  async function withTableMissing<T>(run: () => Promise<T>): Promise<T> {
    const db = t.platform.database.db;
    await db.execute(sql`alter table subscription_connections rename to subscription_connections_away`);
    try {
      return await run();
    } finally {
      await db.execute(sql`alter table subscription_connections_away rename to subscription_connections`);
    }
  }

  it('STATUS_FAILED and DISCONNECT_FAILED: the database fails; nothing changes, and the detail is only in the log', async () => {
    await connect();
    const status = await withTableMissing(() => call(tok.admin, 'GET', 'status'));
    expect(status).toEqual({ status: 500, body: { success: false, code: 'STATUS_FAILED', message: SUBSCRIPTION_MESSAGES.statusFailed } });
    const disconnect = await withTableMissing(() => call(tok.admin, 'POST', 'disconnect'));
    expect(disconnect).toEqual({ status: 500, body: { success: false, code: 'DISCONNECT_FAILED', message: SUBSCRIPTION_MESSAGES.disconnectFailed } });
    expect(await call(tok.admin, 'GET', 'status')).toMatchObject({ body: { connected: true } });
    expect(logged.some((line) => line.includes('subscription could not be disconnected') && line.includes('42P01'))).toBe(true);
  });

  it('POLL_FAILED also when the database fails while polling', async () => {
    await call(tok.admin, 'POST', 'start');
    expect(await withTableMissing(() => call(tok.admin, 'POST', 'poll'))).toMatchObject({ status: 502, body: { code: 'POLL_FAILED' } });
  });
});

describe('the OpenAPI document', () => {
  it('lists the four routes with every status and code', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/docs/json' })).json();
    const expected: Record<string, [string, Record<string, string[]>]> = {
      start: ['post', { 403: ['NOT_TWIN_ADMIN'], 404: [], 502: ['START_FAILED'], 503: ['DEVICE_AUTH_DISABLED'] }],
      poll: ['post', { 400: ['NO_PENDING', 'DEVICE_AUTH_FAILED'], 403: ['NOT_TWIN_ADMIN'], 404: [], 410: ['EXPIRED'], 502: ['POLL_FAILED'] }],
      status: ['get', { 403: ['NOT_TWIN_ADMIN'], 404: [], 500: ['STATUS_FAILED'] }],
      disconnect: ['post', { 403: ['NOT_TWIN_ADMIN'], 404: [], 500: ['DISCONNECT_FAILED'] }],
    };
    for (const [action, [method, statuses]] of Object.entries(expected)) {
      const operation = doc.paths[`${BASE}/${action}`]?.[method];
      expect(operation, action).toBeDefined();
      expect(Object.keys(operation.responses).sort()).toEqual(['200', '401', ...Object.keys(statuses)].sort());
      for (const [status, codes] of Object.entries(statuses)) {
        for (const code of codes) expect(operation.responses[status].description, `${action} ${status}`).toContain(code);
      }
    }
  });
});

describe('secrecy', () => {
  it('no token appears in any response or log line', async () => {
    await connect();
    await ask('One more');
    expect(await storedTokens()).toHaveLength(2);
    for (const request of subscriptionApi.requests) knownTokens.add(String(request.headers.authorization).slice('Bearer '.length));
    // Tokens of every earlier test too: several connections, refreshed and refused ones.
    expect(knownTokens.size).toBeGreaterThan(6);
    const everything = [...bodies, ...logged].join('\n');
    expect(logged.length).toBeGreaterThan(10);
    for (const token of knownTokens) expect(everything).not.toContain(token);
    // Nor the device codes or sealed values.
    const pending = await call(tok.admin, 'POST', 'start');
    const sealed = (await row())!.pendingDeviceCodeSealed!;
    const deviceCode = t.platform.secrets.decrypt(sealed);
    await call(tok.admin, 'POST', 'poll');
    const after = [...bodies, ...logged].join('\n');
    expect(after).not.toContain(deviceCode);
    expect(after).not.toContain(sealed);
    expect(pending.body).not.toHaveProperty('deviceCode');
  });
});
