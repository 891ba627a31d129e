// Crash tests: the service as deployed (`dist/main.js` in child processes) on data that outlives them,
// killed with SIGKILL at chosen points and started again on the same data. The embedded shape is one
// process on a PGlite data folder; the scaled shape is processes of given roles on one PostgreSQL
// database with Redis. After the service stops, `inspect` opens the same data to count rows.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type DatabaseHandle } from '../../src/platform/db/client.js';
import { openTestDatabase, type TestDatabase } from './database.js';
import { spawn } from 'node:child_process';
import { freePort, stopProcess, type ServiceProcess, serviceArgs } from './processes.js';

export const CRASH_ADMIN = { email: 'root@example.test', password: 'a long admin password' };

export interface CrashDeployment {
  /** PostgreSQL + Redis when the run has TEST_DATABASE_URL, else PGlite in `dataDir`. */
  scaled: boolean;
  dataDir: string;
  /**
   * Starts one process of the role (`all` on the embedded shape) on the deployment's data, with extra
   * environment (FAULT_KILL_AT). `mayDie`: a process that kills itself while starting is no failure.
   */
  start(role?: 'all' | 'api' | 'worker', env?: Record<string, string>, options?: { mayDie?: boolean }): Promise<ServiceProcess>;
  /** SIGKILL: no shutdown of any kind; resolves once the process is gone. */
  kill(service: ServiceProcess): Promise<void>;
  /** SIGTERM to every process still running. */
  stopAll(): Promise<void>;
  /** The deployment's database, opened by the test (PGlite only once every process has stopped). */
  inspect<T>(use: (database: DatabaseHandle) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function deployForCrashes(env: Record<string, string>): Promise<CrashDeployment> {
  const scaled = Boolean(process.env.TEST_DATABASE_URL);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-crash-'));
  let database: TestDatabase | undefined;
  const base: Record<string, string> = { ADMIN_EMAIL: CRASH_ADMIN.email, ADMIN_PASSWORD: CRASH_ADMIN.password, DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env };
  if (scaled) {
    database = await openTestDatabase();
    Object.assign(base, {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL ?? '',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
  } else {
    Object.assign(base, { DATABASE_URL: '', REDIS_URL: '' });
  }
  const running = new Set<ServiceProcess>();
  const kill = async (service: ServiceProcess) => {
    service.child.kill('SIGKILL');
    await service.exited;
  };
  return {
    scaled,
    dataDir,
    async start(role = 'all', env = {}, options = {}) {
      const service = await startService(role, { ...base, ...env }, options.mayDie);
      running.add(service);
      void service.exited.then(() => running.delete(service));
      return service;
    },
    kill,
    async stopAll() {
      await Promise.all([...running].map((service) => stopProcess(service)));
    },
    async inspect(use) {
      if (database) return use(database);
      const handle = await openDatabase({ dataDir, migrate: false });
      try {
        return await use(handle);
      } finally {
        await handle.close();
      }
    },
    async close() {
      await Promise.all([...running].map(kill));
      await database?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The deployed service (`node dist/main.js <role>`), waited for until /api/test answers (a start takes tens of seconds on a loaded machine). */
async function startService(role: string, env: Record<string, string>, mayDie = false, timeoutMs = 180_000): Promise<ServiceProcess> {
  const port = await freePort();
  // A worker serves no HTTP: it is up once it logs that it started (its log is read, not shown).
  const worker = role === 'worker';
  const child = spawn(process.execPath, serviceArgs(role), {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', ...(worker ? { LOG_LEVEL: 'info' } : {}) },
    stdio: ['ignore', worker ? 'pipe' : 'inherit', 'inherit'],
  });
  let started = false;
  child.stdout?.on('data', (piece: Buffer) => void (started ||= piece.toString().includes('"msg":"service started"')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (mayDie) return { child, url, exited };
      throw new Error(`the ${role} process exited with ${child.exitCode ?? child.signalCode}`);
    }
    if (worker ? started : await fetch(`${url}/api/test`).then((r) => r.ok, () => false)) return { child, url, exited };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`the ${role} process did not start within ${timeoutMs} ms`);
}

export async function api(url: string, route: string, token?: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { 'x-access-token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

export async function signInAdmin(url: string): Promise<string> {
  const signedIn = await api(url, '/api/auth/signin', undefined, CRASH_ADMIN);
  if (signedIn.status !== 200) throw new Error(`sign-in failed: ${signedIn.status} ${JSON.stringify(signedIn.body)}`);
  return signedIn.body.token as string;
}

export function uploadText(url: string, token: string, filename: string, text: string): Promise<string> {
  return uploadBytes(url, token, filename, Buffer.from(text), 'text/plain');
}

export async function uploadBytes(url: string, token: string, filename: string, bytes: Buffer, type: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), filename);
  const response = await fetch(`${url}/api/user/files`, { method: 'POST', headers: { 'x-access-token': token }, body: form });
  const body = (await response.json()) as { uploadId?: string };
  if (response.status !== 201 || !body.uploadId) throw new Error(`upload failed: ${response.status} ${JSON.stringify(body)}`);
  return body.uploadId;
}

/** Polls until `check` answers something other than undefined, or fails after `timeoutMs`. */
export async function waitForValue<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let failure: unknown;
  for (;;) {
    const value = await check().catch((err: unknown) => void (failure = err));
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${failure ? ` (last error: ${String(failure)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Distinct words, so every chunk is different text. */
export function sampleText(bytes: number, seed: string): string {
  const words: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const word = `${seed}${(i * 7919).toString(36)}${i % 13 === 12 ? '.\n' : ''}`;
    words.push(word);
    size += word.length + 1;
  }
  return words.join(' ');
}
