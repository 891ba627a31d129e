// The subscription connection in the scaled shape: two API processes on one PostgreSQL database and one
// Redis, a real authorization server with the device grant and a model API that accepts only its
// tokens. Signed in on A, approved at the provider, polled on B; B's turns answer from the
// subscription; after a disconnect on A, the very next turn on B answers from the deployment's endpoint.
import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscriptionConnections } from '../src/modules/subscription/subscription.tables.js';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { DEVICE_CLIENT_ID, startDeviceProvider, type TestDeviceProvider } from './support/device-provider.js';
import { buildTwin, buildUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { askQanda } from './support/http.js';
import { signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const BASE = '/api/user/agents/connect/subscription';

describe.runIf(enabled)('the subscription connection across two API processes', () => {
  let database: TestDatabase;
  let idp: TestDeviceProvider;
  let deployment: FakeModelServer;
  let subscriptionApi: FakeModelServer;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    database = await openTestDatabase();
    idp = await startDeviceProvider();
    deployment = await startFakeModelServer();
    subscriptionApi = await startFakeModelServer({
      authorize: async (header) => Boolean(header?.startsWith('Bearer ')) && idp.isServiceAccessToken(header!.slice('Bearer '.length)),
    });
    const usage = { prompt_tokens: 500, completion_tokens: 500 };
    deployment.setDefault({ chunks: ['From the deployment.'], usage });
    subscriptionApi.setDefault({ chunks: ['From the subscription.'], usage });
    const env = {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      OPENAI_BASE_URL: deployment.url,
      DEFAULT_MODEL: 'deployment-model',
      SUBSCRIPTION_ISSUER: idp.issuer,
      SUBSCRIPTION_CLIENT_ID: DEVICE_CLIENT_ID,
      SUBSCRIPTION_API_BASE: subscriptionApi.url,
      SUBSCRIPTION_MODEL: 'subscription-model',
      // The deployment's endpoint costs credits: a free turn did not go there.
      DEFAULT_PRICE_IN: '1',
      DEFAULT_PRICE_OUT: '1',
    };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await Promise.all([idp?.close(), deployment?.close(), subscriptionApi?.close()]);
    await database?.close();
  });

  const send = async (server: ServiceProcess, token: string, method: 'GET' | 'POST', action: string) => {
    const response = await fetch(`${server.url}${BASE}/${action}`, {
      method,
      headers: { 'x-access-token': token, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('connects through A and B, answers from the subscription on B, and after a disconnect on A the next turn on B uses the deployment', async () => {
    const twin = await buildTwin(database.db);
    const admin = await buildUser(database.db, { twin, role: 'admin' });
    const member = await buildUser(database.db, { twin, credits: 1_000 });
    const adminToken = await signInAt(a.url, admin.user.email, admin.password);
    const memberToken = await signInAt(b.url, member.user.email, member.password);
    const ask = async (question: string) => (await askQanda(b.url, memberToken, { inputs: [question], requestArgs: {} })).body;

    // Before: B answers from the deployment.
    expect(await ask('Before?')).toMatchObject({ success: true, answer: 'From the deployment.', credits: 1 });

    const started = await send(a, adminToken, 'POST', 'start');
    expect(started.status).toBe(200);
    expect(await send(b, adminToken, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: false, pending: true } });
    await idp.approve(started.body.verificationUriComplete as string, 'subscriber-1');
    // As if the 5-second interval had passed (the claim is in the database, shared by both processes).
    await database.db.update(subscriptionConnections).set({ pendingNextPollAt: sql`now() - interval '1 second'` }).where(eq(subscriptionConnections.twinId, twin.id));
    expect(await send(b, adminToken, 'POST', 'poll')).toEqual({ status: 200, body: { success: true, connected: true, pending: false } });
    expect(await send(a, adminToken, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: true } });

    const before = subscriptionApi.requests.length;
    expect(await ask('Which model?')).toMatchObject({ success: true, answer: 'From the subscription.', credits: 0 });
    expect(subscriptionApi.requests.length).toBe(before + 1);
    expect(subscriptionApi.requests.at(-1)!.model).toBe('subscription-model');

    // Disconnect on A; the very next turn on B (no waiting) uses the deployment's endpoint.
    expect(await send(a, adminToken, 'POST', 'disconnect')).toEqual({ status: 200, body: { success: true, connected: false } });
    const viaDeployment = deployment.requests.length;
    expect(await ask('And now?')).toMatchObject({ success: true, answer: 'From the deployment.', credits: 1 });
    expect(deployment.requests.length).toBe(viaDeployment + 1);
    expect(deployment.requests.at(-1)!.model).toBe('deployment-model');
    expect(subscriptionApi.requests.length).toBe(before + 1);
    expect(await send(b, adminToken, 'GET', 'status')).toEqual({ status: 200, body: { success: true, connected: false } });
  });
});
