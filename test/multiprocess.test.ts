// The scaled shape: two API processes on one PostgreSQL database and one Redis. A token signed on
// process A works on B, and signing out on B stops the token on A at once: A had the caller cached,
// so only the bus message from B (through Redis) can make it refuse. A profile cached on A shows a
// change made through B: only the database's row change notice can tell A.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildUser } from './support/factories.js';
import { startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.runIf(enabled)('two API processes on one database and one Redis', () => {
  let database: TestDatabase;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    database = await openTestDatabase();
    const env = {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await database?.close();
  });

  const post = (base: string, path: string, token?: string, body: unknown = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { 'x-access-token': token } : {}) },
      body: JSON.stringify(body),
    });

  it('both report the shared database and Redis', async () => {
    for (const server of [a, b]) {
      const health = await (await fetch(`${server.url}/api/test`)).json();
      expect(health).toMatchObject({ status: 'ok', database: 'postgres', redis: true });
    }
  });

  it('a sign-out on B revokes the token on A at once', async () => {
    const person = await buildUser(database.db);
    const signIn = await post(a.url, '/api/auth/signin', undefined, { email: person.user.email, password: person.password });
    expect(signIn.status).toBe(200);
    const { token } = await signIn.json();

    expect((await post(a.url, '/api/user/refresh/profile', token)).status).toBe(200); // now cached on A
    expect((await post(b.url, '/api/user/refresh/profile', token)).status).toBe(200); // and valid on B

    expect((await post(b.url, '/api/auth/signout', token)).status).toBe(200);
    // Give Redis a moment to deliver, far below the 5 s cache lifetime on A.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await post(a.url, '/api/user/refresh/profile', token)).status).toBe(401);
    expect((await post(b.url, '/api/user/refresh/profile', token)).status).toBe(401);
  });

  it('a change made through B shows in the profile A has cached', async () => {
    const person = await buildUser(database.db);
    const signIn = await post(a.url, '/api/auth/signin', undefined, { email: person.user.email, password: person.password });
    const { token } = await signIn.json();
    const profileOn = async (server: ServiceProcess) => (await (await post(server.url, '/api/user/refresh/profile', token)).json()).profile;
    expect((await profileOn(a)).pin_ui).toBe(false);
    expect((await profileOn(a)).pin_ui).toBe(false); // served from A's cache now

    const saved = await fetch(`${b.url}/api/user/setting`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-access-token': token },
      body: JSON.stringify({ pin_ui: true }),
    });
    expect(saved.status).toBe(200);
    // The notice travels database → A in about a millisecond; allow far more before calling it lost.
    const deadline = Date.now() + 2_000;
    let seen = (await profileOn(a)).pin_ui;
    while (!seen && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen = (await profileOn(a)).pin_ui;
    }
    expect(seen).toBe(true);
  });
});
