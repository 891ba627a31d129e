// Real service processes for tests of the scaled shape and of shutdown: start one on a free port,
// wait until /api/test answers, and stop it with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { takeSlot } from './slots.js';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Ports for processes a test starts, from a range of this worker's own below the system's ephemeral
 * ports. A port the system picks (`listen(0)`) and releases can be picked again by another worker's
 * fake server before the process binds it; a port of the worker's own range is never another worker's.
 * Outside vitest (the benches) a port the system picks.
 */
const PORTS_PER_WORKER = 400;
const FIRST_PORT = 21_000;
let nextPort = 0;

export async function freePort(): Promise<number> {
  if (process.env.VITEST_POOL_ID === undefined) return systemPort();
  const worker = Number(process.env.VITEST_POOL_ID);
  for (let tried = 0; tried < PORTS_PER_WORKER; tried++) {
    const port = FIRST_PORT + worker * PORTS_PER_WORKER + (nextPort++ % PORTS_PER_WORKER);
    if (await canBind(port)) return port;
  }
  throw new Error('no free port in this worker\'s range');
}

function systemPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The service's entry as deployed: the compiled output (`npm start` runs it; the tests' global set-up
 * builds it, as the start command's prestart does). Tests start the same JavaScript a deployment runs.
 */
export const SERVICE_MAIN = 'dist/main.js';

/** `node` arguments that run the deployed service in `role` (none: the default, `all`). */
export function serviceArgs(...role: string[]): string[] {
  return [SERVICE_MAIN, ...role];
}

/** How many service processes of the whole run may be starting at once (files run in parallel; a start is CPU-bound). */
const STARTS_AT_ONCE = 2;

/**
 * Runs `node <script> [...args]` (a `.ts` script through tsx) with the environment given, and waits
 * until it serves. On a free port, or on env.PORT when given (a test that must know its URL before the start).
 */
export async function startProcess(script: string, args: string[], env: Record<string, string>): Promise<ServiceProcess> {
  const slot = await takeSlot('service-start', STARTS_AT_ONCE);
  try {
    return await startAndWait(script, args, env);
  } finally {
    slot.release();
  }
}

async function startAndWait(script: string, args: string[], env: Record<string, string>): Promise<ServiceProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('exit', () => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 1_200; attempt++) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}`);
    if (await fetch(`${url}/api/test`).then((r) => r.ok, () => false)) return { child, url, exited };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error('process did not start');
}

/** Service processes started in this worker that have not exited. */
const running = new Set<ChildProcess>();

/**
 * Kills what a file left running (worker-env.ts calls it after each file's own clean-up): a process
 * whose start outlasted its test's timeout is returned to a test that has already ended, and the
 * worker, which runs later files, would otherwise keep it.
 */
export function killStrayProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

export async function stopProcess(service: ServiceProcess | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null) return;
  service.child.kill('SIGTERM');
  await service.exited;
}

/** The scaled shape's environment: the test database and Redis, fresh secrets shared by every process, the fake model. */
export function scaledEnv(databaseUrl: string, modelUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.TEST_REDIS_URL!,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    OPENAI_BASE_URL: modelUrl,
    DEFAULT_MODEL: 'fake-chat',
  };
}

/** Signs in over HTTP, as a client does, and returns the session token. */
export async function signInAt(url: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${url}/api/auth/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return ((await response.json()) as { token: string }).token;
}
