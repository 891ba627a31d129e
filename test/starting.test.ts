// While a process starts (the database opening, migrations, the app being built), its port already
// answers: `GET /api/test` says 503 `starting` in the health body's shape, any other route 503 in the
// failure shape (code STARTING), both with Retry-After; once ready, the same port answers 200. No
// connection is refused after the first answer. The embedded shape on a fresh data folder, and a
// group of two API processes on PostgreSQL + Redis (the primary answers while the group starts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from './support/database.js';
import { freePort, scaledEnv, serviceArgs, stopProcess, type ServiceProcess } from './support/processes.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Seen {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

/** Starts the service and polls `route` from the spawn until it answers `readyStatus`; every answer and refusal, in order. */
async function watchStart(args: string[], env: Record<string, string>, route: string, readyStatus = 200) {
  const port = await freePort();
  const child = spawn(process.execPath, args, { env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const service: ServiceProcess = { child, url: `http://127.0.0.1:${port}`, exited };
  cleanups.push(() => stopProcess(service));
  const seen: Array<Seen | 'refused'> = [];
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const answer = await fetch(`${service.url}${route}`).then(
      async (response): Promise<Seen> => ({ status: response.status, body: (await response.json()) as Record<string, unknown>, retryAfter: response.headers.get('retry-after') }),
      () => 'refused' as const,
    );
    seen.push(answer);
    if (answer !== 'refused' && answer.status === readyStatus) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const firstAnswer = seen.findIndex((entry) => entry !== 'refused');
  expect(firstAnswer).toBeGreaterThanOrEqual(0);
  const answered = seen.slice(firstAnswer);
  expect(answered).not.toContain('refused');
  expect((answered.at(-1) as Seen).status).toBe(readyStatus);
  // Nothing but the starting answer before the ready one.
  expect(answered.slice(0, -1).every((entry) => (entry as Seen).status === 503)).toBe(true);
  return { service, starting: answered.filter((entry): entry is Seen => entry !== 'refused' && entry.status === 503) };
}

describe('a starting process answers 503 starting instead of refusing connections', () => {
  it('embedded shape, fresh data folder: /api/test says starting, then ok', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-starting-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const { starting } = await watchStart(serviceArgs(), { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' }, '/api/test');
    expect(starting.length).toBeGreaterThan(0);
    for (const answer of starting) {
      expect(answer.body).toEqual({ success: false, status: 'starting', version: expect.any(String), database: 'pglite', redis: false });
      expect(answer.retryAfter).toBe('1');
    }
  });

  it('embedded shape: any other route answers 503 STARTING in the failure shape while starting', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-starting-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // Once ready, the same port answers the route itself: 401 without a token.
    const { starting } = await watchStart(serviceArgs(), { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' }, '/api/user/assistants', 401);
    expect(starting.length).toBeGreaterThan(0);
    for (const answer of starting) {
      expect(answer.body).toEqual({ success: false, message: 'The service is starting; try again in a moment', code: 'STARTING' });
      expect(answer.retryAfter).toBe('1');
    }
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL))('a group of two API processes: the primary answers starting until the group is up', { timeout: 180_000 }, async () => {
    const database = await openTestDatabase();
    cleanups.push(() => database.close());
    const { starting } = await watchStart(serviceArgs('api'), { ...scaledEnv(database.url!, 'http://127.0.0.1:9'), API_PROCESSES: '2' }, '/api/test');
    expect(starting.length).toBeGreaterThan(0);
    for (const answer of starting) {
      expect(answer.body).toEqual({ success: false, status: 'starting', version: expect.any(String), database: 'postgres', redis: true });
      expect(answer.retryAfter).toBe('1');
    }
  });
});
