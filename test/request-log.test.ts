// The request log of a real process (`dist/main.js`, the default LOG_LEVEL, stdout to a file): its lines
// are written in batches (platform/logging/batched-destination.ts), so this checks none is lost: each request's one line
// (request, status and time together: platform/http/request-log.ts) is in the log within a fraction of
// a second while the process runs on, and what was still buffered when SIGTERM came is flushed before
// the process exits. On PostgreSQL + Redis also with two API processes, whose lines the primary does
// not write for them. Links that carry a credential in their query (an export download, a password
// reset, a provider's callback) leave only `[redacted]` in the log.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestDatabase, seededDataDir, type TestDatabase } from './support/database.js';
import { freePort, serviceArgs } from './support/processes.js';

const scaled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
let dataDir: string | undefined;
let database: TestDatabase | undefined;

afterEach(async () => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await database?.close();
  dataDir = database = undefined;
});

/** Starts the service with stdout and stderr to a file, makes `count` requests, sends SIGTERM as soon as they are answered. */
async function requestsThenSigterm(
  env: Record<string, string>,
  count: number,
  beforeSignal?: (readLines: () => Array<Record<string, unknown>>, ids: string[], url: string) => Promise<void>,
): Promise<{ lines: Array<Record<string, unknown>>; ids: string[]; exitCode: number | null }> {
  dataDir = seededDataDir('dt-log-');
  const logFile = path.join(dataDir, 'service.log');
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir };
  delete childEnv.LOG_LEVEL; // the default: info
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, serviceArgs(), { env: childEnv, stdio: ['ignore', out, out] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; !(await fetch(`${url}/api/test`).then((r) => r.ok, () => false)); attempt++) {
    if (child.exitCode !== null || attempt > 300) throw new Error(`the service did not start: ${readFileSync(logFile, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const run = randomBytes(4).toString('hex');
  const ids = Array.from({ length: count }, (_, i) => `log-${run}-${i}`);
  await Promise.all(ids.map((id) => fetch(`${url}/api/test`, { headers: { 'x-request-id': id } }).then((r) => r.text())));
  // While the process writes, the file may end inside a batch being written: only the text up to the
  // last newline is whole. Once it has exited, the file must end with one. A torn line (a batch cut
  // into another) would throw in JSON.parse either way.
  const readLines = (running: boolean) => {
    const text = readFileSync(logFile, 'utf8');
    const whole = running ? text.slice(0, text.lastIndexOf('\n') + 1) : text;
    if (!running) expect(text.endsWith('\n'), 'the log ends with a whole line').toBe(true);
    return whole
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };
  try {
    await beforeSignal?.(() => readLines(true), ids, url);
  } catch (error) {
    child.kill('SIGKILL'); // a failed check must not leave the service running
    throw error;
  }
  child.kill('SIGTERM');
  const exitCode = await exited;
  return { lines: readLines(false), ids, exitCode };
}

function expectEveryRequestLogged(lines: Array<Record<string, unknown>>, ids: string[]): void {
  for (const id of ids) {
    const logged = lines.filter((line) => line.reqId === id);
    expect(logged.map((line) => line.msg), id).toEqual(['request completed']);
    expect(logged[0], id).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/api/test', remoteAddress: '127.0.0.1', remotePort: expect.any(Number) },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
  }
}

describe('the request log', () => {
  it('has the line of every request and the lines written just before SIGTERM (one process)', async () => {
    const { lines, ids, exitCode } = await requestsThenSigterm({ DATABASE_URL: '', REDIS_URL: '', API_PROCESSES: '1' }, 200, async (readLines, answered) => {
      // Lines are written in batches, and what a batch holds goes out within a fraction of a second
      // while the process runs on: a kill now would lose none of these requests' lines.
      const deadline = Date.now() + 2_000;
      const logged = () => new Set(readLines().filter((line) => line.msg === 'request completed').map((line) => line.reqId));
      while (!answered.every((id) => logged().has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered.filter((id) => !logged().has(id))).toEqual([]);
    });
    expect(exitCode).toBe(0);
    expectEveryRequestLogged(lines, ids);
    // The last lines before process.exit: flushed on exit, not lost with the buffer.
    expect(lines.map((line) => line.msg)).toEqual(expect.arrayContaining(['shutting down', 'job queue stopped']));
  }, 60_000);

  it('never holds the token of an export download, a password reset or a sign-in callback', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const links = [
      `/api/user/data/export/${'a'.repeat(24)}/download?token=${token}`,
      `/reset-password?token=${token}`,
      `/api/auth/oauth/school/callback?code=${token}&state=${token}`,
      `/api/user/files?access_token=${token}&apiKey=${token}&page=1`,
    ];
    const { lines } = await requestsThenSigterm({ DATABASE_URL: '', REDIS_URL: '', API_PROCESSES: '1' }, 1, async (readLines, _ids, url) => {
      await Promise.all(links.map((link, i) => fetch(url + link, { headers: { 'x-request-id': `secret-${i}` } }).then((r) => r.text())));
      const deadline = Date.now() + 2_000;
      const logged = () => readLines().filter((line) => String(line.reqId).startsWith('secret-'));
      while (logged().length < links.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    });
    const text = lines.map((line) => JSON.stringify(line)).join('\n');
    expect(text).not.toContain(token);
    const urls = links.map((_, i) => (lines.find((line) => line.reqId === `secret-${i}` && line.msg === 'request completed')?.req as { url?: string })?.url);
    expect(urls).toEqual([
      `/api/user/data/export/${'a'.repeat(24)}/download?token=[redacted]`,
      '/reset-password?token=[redacted]',
      '/api/auth/oauth/school/callback?code=[redacted]&state=[redacted]',
      '/api/user/files?access_token=[redacted]&apiKey=[redacted]&page=1',
    ]);
  }, 90_000);

  it.runIf(scaled)('has every line of two API processes', async () => {
    database = await openTestDatabase();
    const { lines, ids, exitCode } = await requestsThenSigterm(
      {
        DATABASE_URL: database.url!,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        JWT_SECRET: randomBytes(32).toString('hex'),
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        API_PROCESSES: '2',
      },
      200,
    );
    expect(exitCode).toBe(0);
    expectEveryRequestLogged(lines, ids);
    // The primary's and each API process's own line on SIGTERM.
    expect(new Set(lines.filter((line) => line.msg === 'shutting down').map((line) => line.pid)).size).toBe(3);
  }, 60_000);
});
