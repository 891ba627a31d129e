// A real process (`npm start`'s entry, the embedded default) whose database thread stops on its own
// (the crash harness's FAULT_KILL_AT=database:<n>): it says why in its log and exits 1, so that a
// supervisor can start it again, instead of staying up answering every request with an error.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, serviceArgs } from './support/processes.js';

let dataDir: string | undefined;
afterEach(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe('the embedded database thread stopping on its own', () => {
  // The scaled run has no embedded database thread to stop (its process test is this one, on PGlite).
  it.skipIf(Boolean(process.env.TEST_DATABASE_URL))('makes the process log the cause and exit 1', async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-db-lost-'));
    const logFile = path.join(dataDir, 'service.log');
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: '', REDIS_URL: '' };
    // Starting takes a few hundred statements; /api/test reads the database on each call after that.
    env.FAULT_KILL_AT = 'database:600';
    delete env.LOG_LEVEL;
    const out = openSync(logFile, 'a');
    const child = spawn(process.execPath, serviceArgs(), { env, stdio: ['ignore', out, out] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let served = 0;
    const deadline = Date.now() + 60_000;
    while (child.exitCode === null && Date.now() < deadline) {
      const status = await fetch(`http://127.0.0.1:${port}/api/test`).then((r) => r.status, () => 0);
      if (status === 200) served++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (child.exitCode === null) child.kill('SIGKILL');
    expect(await exited).toBe(1);
    expect(served).toBeGreaterThan(0); // it served before the thread stopped
    const lines = readFileSync(logFile, 'utf8').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ level: 60, msg: 'the embedded database stopped; the process exits', err: { message: 'the database thread stopped (exit code 70)' } });
  }, 90_000);
});
