// The service as a deployment runs it, for the benches: its own process started the way `npm start`
// starts it (the start script's node options and entry, read from package.json), the default LOG_LEVEL
// (info: stdout is a pipe to a reader writing BENCH_LOG, else /dev/null), a fresh DATA_DIR, the first admin from
// ADMIN_EMAIL/ADMIN_PASSWORD. With BENCH_DATABASE_URL (+ BENCH_REDIS_URL) it runs the scaled shape on a
// fresh database of that server (created here, dropped after) with API_PROCESSES one per core unless
// BENCH_API_PROCESSES says otherwise. Stopped with SIGTERM, as a deployment stops it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { freePort } from '../../test/support/processes.js';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN = { email: 'bench-admin@example.test', password: 'bench-admin-password' };

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  shape: string;
  processes: number;
  logFile: string;
  /** ms from spawning the process to its first 200 on /api/test. */
  startMs: number;
  /** The data folder and (scaled shape) database it runs on: pass them to another start to reuse them. */
  dataDir: string;
  databaseUrl?: string;
  /** CPU time (ms, user + system) of the service's processes so far: the primary and its children. */
  cpuMs(): number;
  /** Every pid of the service (the primary first). */
  pids(): number[];
  stop(): Promise<void>;
}


/** `npm start`'s command line without `node`: its node options and entry (and role, if any). */
export function startCommand(root = ROOT): string[] {
  const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const [node, ...args] = scripts.start.split(/\s+/).filter(Boolean);
  if (node !== 'node') throw new Error(`npm start does not run node: ${scripts.start}`);
  return args;
}

/** A fresh database on the BENCH_DATABASE_URL server; its URL and how to drop it. */
async function freshDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface StartOptions {
  /** The deployment model endpoint (OPENAI_BASE_URL), if the bench streams answers. */
  modelUrl?: string;
  /** Extra node options (BENCH_PROFILE's --cpu-prof), placed before the entry. */
  nodeArgs?: string[];
  /** Start on this existing data folder (and BENCH_DATABASE_URL's database `databaseUrl`), left in place at stop. */
  reuse?: { dataDir: string; databaseUrl?: string };
  /** Leave the fresh data folder and database in place at stop (the caller reuses, then removes them with removeLeftovers). */
  keep?: boolean;
  /** Settings of this start beyond the deployment's (bench:stream's STREAM_LOG=off). */
  env?: Record<string, string>;
  /** The checkout whose service to start (this one unless given): another commit's, for a same-run comparison. */
  root?: string;
}

/** Removes what a start with `keep` left: its data folder and database. */
export async function removeLeftovers(service: Pick<ServiceProcess, 'dataDir' | 'databaseUrl'>): Promise<void> {
  rmSync(service.dataDir, { recursive: true, force: true });
  if (!service.databaseUrl || !process.env.BENCH_DATABASE_URL) return;
  const client = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${new URL(service.databaseUrl).pathname.slice(1)} WITH (FORCE)`);
  await client.end();
}

export async function startService(options: StartOptions = {}): Promise<ServiceProcess> {
  const dataDir = options.reuse?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'dt-bench-'));
  const logFile = process.env.BENCH_LOG ?? '/dev/null';
  const scaledUrl = process.env.BENCH_DATABASE_URL;
  const reused = options.reuse?.databaseUrl;
  const database = reused ? { url: reused, drop: async () => {} } : scaledUrl ? await freshDatabase(scaledUrl) : undefined;
  const processes = scaledUrl && process.env.BENCH_REDIS_URL ? Number(process.env.BENCH_API_PROCESSES ?? os.availableParallelism()) : 1;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    OPENAI_BASE_URL: options.modelUrl ?? '',
    OPENAI_API_KEY: options.modelUrl ? 'bench' : '',
    DEFAULT_MODEL: options.modelUrl ? 'bench-model' : '',
    DATABASE_URL: database?.url ?? '',
    REDIS_URL: database ? (process.env.BENCH_REDIS_URL ?? '') : '',
    JWT_SECRET: database ? randomBytes(32).toString('hex') : '',
    ENCRYPTION_KEY: database ? randomBytes(32).toString('hex') : '',
    API_PROCESSES: String(processes),
    ...options.env,
  };
  // The default level, as a deployment that sets none runs it; BENCH_LOG_LEVEL only for a figure beside it.
  delete env.LOG_LEVEL;
  if (process.env.BENCH_LOG_LEVEL) env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL;
  // npm start's prestart: the compiled service (dist/) is built when missing or stale.
  const root = options.root ?? ROOT;
  spawnSync(process.execPath, [path.join(root, 'scripts', 'build-server.mjs')], { stdio: 'inherit', cwd: root });
  const command = startCommand(root);
  const entry = command.findIndex((arg) => arg.endsWith('.ts') || arg.endsWith('.js'));
  // BENCH_NODE_ARGS: more node options for a look inside (e.g. `--perf-basic-prof` for `perf record`).
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  command.splice(entry, 0, ...(options.nodeArgs ?? []), ...extra);
  // As a container runtime or systemd collects it: stdout is a pipe, read by another process (`cat`,
  // writing to the log file). BENCH_LOG_VIA=file redirects stdout to the file itself instead.
  const log = openSync(logFile, 'a');
  const sink = process.env.BENCH_LOG_VIA === 'file' ? undefined : spawn('cat', [], { stdio: ['pipe', log, 'inherit'] });
  const out = sink?.stdin ?? log;
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, command, { cwd: root, env, stdio: ['ignore', out, out] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => sink?.stdin?.end());
  const url = `http://127.0.0.1:${port}`;
  const cleanUp = async () => {
    if (options.reuse || options.keep) return;
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  for (let attempt = 0; ; attempt++) {
    const failure = child.exitCode !== null ? `the service exited with ${child.exitCode} (log: ${logFile})` : attempt > 2400 ? 'the service did not start within 60 s' : undefined;
    if (failure) {
      child.kill('SIGKILL');
      await cleanUp(); // no database or folder left behind by a failed start
      throw new Error(failure);
    }
    if (await fetch(`${url}/api/test`).then((r) => r.ok, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const startMs = performance.now() - spawnedAt;
  const pids = () => [child.pid!, ...childrenOf(child.pid!)];
  return {
    url,
    child,
    shape: database ? `PostgreSQL + Redis, ${processes} API process(es)` : 'embedded (PGlite, one process)',
    processes,
    logFile,
    startMs,
    dataDir,
    databaseUrl: database?.url,
    pids,
    cpuMs: () => pids().reduce((sum, pid) => sum + cpuOf(pid), 0),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await cleanUp();
    },
  };
}

/** Linux: the pids whose parent is `pid` (an API group's processes). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat && Number(stat[1]) === pid) found.push(Number(name));
  }
  return found;
}

/** Fields of /proc/<pid>/stat after the command name (ppid is [1], utime [11], stime [12]). */
function statOf(pid: number, tid?: number): string[] | undefined {
  try {
    const text = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (ms, user + system) a process has used so far; 0 once it is gone. */
export function cpuOf(pid: number): number {
  const stat = statOf(pid);
  return stat ? cpuMsOf(stat) : 0;
}

/** User plus system time of a process's or a thread's stat fields, in ms. */
const cpuMsOf = (stat: string[]): number => (Number(stat[11]) + Number(stat[12])) * TICK_MS;

/** What a thread has used so far: CPU time (ms, user + system) and the times it went to sleep (wake-ups). */
export interface ThreadUse {
  cpuMs: number;
  wakes: number;
}

/**
 * CPU time and wake-ups of each thread of a process so far, by thread id; the main thread's id is the
 * pid. A wake-up is a voluntary context switch (the thread slept, waiting for I/O, a timer, a lock or a
 * message, and was woken): on these virtual machines each costs tens of microseconds of CPU of its own
 * (performance.md, "How to measure"). Empty once the process is gone; a thread that ended since is not
 * in it.
 */
export function threadUseOf(pid: number): Map<number, ThreadUse> {
  const threads = new Map<number, ThreadUse>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    const stat = statOf(pid, Number(tid));
    if (stat) threads.set(Number(tid), { cpuMs: cpuMsOf(stat), wakes: voluntarySwitchesOf(pid, Number(tid)) });
  }
  return threads;
}

function voluntarySwitchesOf(pid: number, tid: number): number {
  try {
    const match = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0; // gone
  }
}
