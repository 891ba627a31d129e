// A fresh deployment as the README starts it (`dist/main.js`, the first admin from ADMIN_EMAIL and
// ADMIN_PASSWORD, a model endpoint, default settings otherwise) answers its people: the administrator
// creates a person through the admin route, and that person's first question is answered on both
// transports' routes, free, their STARTING_CREDITS untouched. An operator who prices the endpoint
// charges it from those starting credits. On PGlite in a new data folder (a copy of the run's migrated
// one: a first start's migrations are the README test's and starting.test.ts's), or on a new PostgreSQL
// database with Redis when TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, seededDataDir, type TestDatabase } from './support/database.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { readSse } from './support/sse-client.js';

const ADMIN = { email: 'root@example.test', password: 'a long admin password' };
let model: FakeModelServer;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  model = await startFakeModelServer();
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await model?.close();
});

/** The service on an empty database of its own, started as a deployment starts it. */
async function deploy(env: Record<string, string>): Promise<ServiceProcess & { database?: TestDatabase }> {
  const base: Record<string, string> = { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-test', ...env };
  let database: TestDatabase | undefined;
  if (process.env.TEST_DATABASE_URL) {
    database = await openTestDatabase(); // migrated, no account yet
    Object.assign(base, {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL ?? '',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
  } else {
    Object.assign(base, { DATABASE_URL: '', REDIS_URL: '' });
  }
  // Embedded: migrated, no account yet, as on the server (a copy of the run's migrated folder).
  const dataDir = seededDataDir('dt-fresh-');
  const service = await startProcess(SERVICE_MAIN, [], { DATA_DIR: dataDir, ...base });
  cleanups.push(async () => {
    await stopProcess(service);
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return Object.assign(service, { database });
}

async function call(url: string, route: string, token: string | undefined, body?: unknown, method = body === undefined ? 'GET' : 'POST') {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { 'x-access-token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function signIn(url: string, email: string, password: string) {
  const signedIn = await call(url, '/api/auth/signin', undefined, { email, password });
  expect(signedIn.status).toBe(200);
  return signedIn.body as { token: string; profile: Record<string, any> };
}

/** The administrator creates Sam in the first twin; Sam signs in. */
async function newPerson(url: string) {
  const admin = await signIn(url, ADMIN.email, ADMIN.password);
  const created = await call(url, '/api/admin/user', admin.token, { email: 'sam@example.test', password: 'sam password 123', fname: 'Sam' });
  expect(created.status).toBe(201);
  return signIn(url, 'sam@example.test', 'sam password 123');
}

async function askOverSse(url: string, token: string, question: string) {
  const response = await fetch(`${url}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs: {} }),
  });
  expect(response.status).toBe(200);
  return readSse(response).rest();
}

describe('a fresh deployment with a model endpoint', () => {
  it("answers a new person's first questions for free, their starting credits untouched", async () => {
    const service = await deploy({ STARTING_CREDITS: '5' });
    const sam = await newPerson(service.url);
    expect(sam.profile.credits).toBe(5);

    model.enqueue({ chunks: ['Hello ', 'Sam.'], usage: { prompt_tokens: 1200, completion_tokens: 800 } });
    const frames = await askOverSse(service.url, sam.token, 'Hello?');
    expect(frames.map((frame) => frame.type)).toEqual(['connected', 'started', 'stream', 'stream', 'complete', 'done']);
    expect(frames[4]).toMatchObject({ success: true, outputs: ['Hello Sam.'], credits: 0 });

    model.enqueue({ chunks: ['Again.'], usage: { prompt_tokens: 100, completion_tokens: 100 } });
    const json = await call(service.url, '/api/ai/personal/qanda', sam.token, { inputs: ['Once more?'], requestArgs: {} });
    expect(json).toMatchObject({ status: 200, body: { success: true, answer: 'Again.', credits: 0 } });

    const profile = await call(service.url, '/api/user/refresh/profile', sam.token, {});
    expect(profile.body.profile.credits).toBe(5);
  });

  it('charges a priced endpoint from the starting credits, and refuses what they cannot cover', async () => {
    const service = await deploy({ STARTING_CREDITS: '12', DEFAULT_PRICE_IN: '1', DEFAULT_PRICE_OUT: '2' });
    const sam = await newPerson(service.url);
    expect(sam.profile.credits).toBe(12);
    model.enqueue({ chunks: ['Priced.'], usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const answered = await call(service.url, '/api/ai/personal/qanda', sam.token, { inputs: ['How much?'], requestArgs: {} });
    expect(answered).toMatchObject({ status: 200, body: { answer: 'Priced.', credits: 2 } });
    expect((await call(service.url, '/api/user/refresh/profile', sam.token, {})).body.profile.credits).toBe(10);
    // A turn holds its most expensive cost first: ~2,100 prompt tokens at 1 and 4,096 out at 2 per 1K, 10.27
    // credits, which 12 covered and 10 do not.
    const refused = await call(service.url, '/api/ai/personal/qanda', sam.token, { inputs: ['And now?'], requestArgs: {} });
    expect(refused).toMatchObject({ status: 402, body: { success: false, code: 'INSUFFICIENT_CREDITS' } });
  });
});

describe.runIf(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)('a fresh deployment of two API processes', () => {
  it('makes the first admin and twin once, and its people are answered', async () => {
    const service = await deploy({ API_PROCESSES: '2' });
    const sam = await newPerson(service.url);
    const counts = await service.database!.executeSql(
      `select (select count(*)::int from users where email = $1) as admins, (select count(*)::int from institutions) as twins`,
      [ADMIN.email],
    );
    expect(counts.rows[0]).toEqual({ admins: 1, twins: 1 });
    model.enqueue({ chunks: ['Hello ', 'from a group.'] });
    const json = await call(service.url, '/api/ai/personal/qanda', sam.token, { inputs: ['Hello?'], requestArgs: {} });
    expect(json).toMatchObject({ status: 200, body: { success: true, answer: 'Hello from a group.' } });
  });
});
