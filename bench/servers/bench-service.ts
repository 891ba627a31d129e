// What both service benches start: the service as deployed (PostgreSQL when BENCH_DATABASE_URL is set,
// else PGlite) with one person of their own twin, created directly so any database (fresh or reused)
// will do, signed in through the real route. BENCH_API_PROCESSES above 1 runs it as npm start does
// with API_PROCESSES: a primary handing connections to that many API processes (each one runs this
// file again as a cluster worker); the figures the parent asks for are then summed or maxed over them.
// Reports to the parent process and exits normally when asked (so --cpu-prof can write its profile).
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { insertInstitution, insertMembership } from '../../src/modules/institutions/institutions.repo.js';
import { insertUser, updateUser } from '../../src/modules/users/users.repo.js';
import { serveHandedConnections, startProcessGroup } from '../../src/platform/http/process-group.js';
import { closePlatform, openPlatform } from '../../src/platform/platform.js';
import { SOCKET_PATH } from '../../src/platform/realtime/socket.js';
import { watchProcess, type ProcessFigures } from './process-figures.js';

const PASSWORD = 'bench-password';
const quiet = { info: () => {}, error: () => {} };

export interface BenchServiceOptions {
  env?: Record<string, string>;
  role: 'user' | 'admin';
  credits?: number;
}

export async function startBenchService(options: BenchServiceOptions): Promise<void> {
  if (cluster.isWorker) return serveInGroup(options);
  const processes = Math.max(1, Number(process.env.BENCH_API_PROCESSES ?? 1));
  // Shared by every API process of a group (they inherit this environment).
  process.env.BENCH_JWT_SECRET = randomBytes(32).toString('hex');
  process.env.BENCH_ENCRYPTION_KEY = randomBytes(32).toString('hex');
  process.env.BENCH_DATA_DIR = mkdtempSync(path.join(os.tmpdir(), 'dt-bench-'));
  const config = serviceConfig(options);
  const platform = await openPlatform(config, quiet);
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const db = platform.database.db;
  const user = await insertUser(db, { email, passwordHash: await hashPassword(PASSWORD), fname: 'Bench', credits: options.credits ?? 0 });
  const twin = await insertInstitution(db, { name: `Bench twin ${email}` });
  await insertMembership(db, { institutionId: twin.id, userId: user.id, role: options.role });
  await updateUser(db, user.id, { currentInstitutionId: twin.id });

  let port: number;
  let figures: () => Promise<ProcessFigures>;
  let reset: () => void;
  if (processes === 1) {
    const app = await buildApp({ ...platform, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
    const watch = watchProcess();
    figures = async () => watch.report();
    reset = () => watch.reset();
  } else {
    await closePlatform(platform);
    const group = await startProcessGroup({ processes, port: 0, host: '127.0.0.1', socketPath: SOCKET_PATH, log: quiet });
    port = group.port;
    figures = async () => combine(await Promise.all(Object.values(cluster.workers ?? {}).map((worker) => askFigures(worker!))));
    reset = () => Object.values(cluster.workers ?? {}).forEach((worker) => worker?.send('loop-reset'));
  }

  const signIn = await fetch(`http://127.0.0.1:${port}/api/auth/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  process.on('message', (message) => {
    if (message === 'exit') {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.send('exit');
      setTimeout(() => process.exit(0), processes > 1 ? 1_000 : 0);
    }
    if (message === 'loop-reset') reset();
    if (message === 'loop-report') void figures().then((loop) => process.send?.({ loop }));
  });
  process.send?.({
    port,
    token: ((await signIn.json()) as { token: string }).token,
    userId: user.id,
    database: platform.database.kind,
    processes,
  });
}

function serviceConfig(options: BenchServiceOptions) {
  return loadConfig({
    DATA_DIR: process.env.BENCH_DATA_DIR,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
    JWT_SECRET: process.env.BENCH_JWT_SECRET,
    ENCRYPTION_KEY: process.env.BENCH_ENCRYPTION_KEY,
    LOG_LEVEL: 'silent',
    ...options.env,
  });
}

/** One API process of a group: the app on the connections the primary hands over, and its figures. */
async function serveInGroup(options: BenchServiceOptions): Promise<void> {
  const platform = await openPlatform(serviceConfig(options), quiet);
  const app = await buildApp({ ...platform, logger: false });
  const watch = watchProcess();
  process.on('message', (message) => {
    if (message === 'exit') process.exit(0);
    if (message === 'loop-reset') watch.reset();
    if (message === 'loop-report') process.send?.({ figures: watch.report() });
  });
  await serveHandedConnections(app);
}

function askFigures(worker: NonNullable<NodeJS.Dict<import('node:cluster').Worker>[string]>): Promise<ProcessFigures> {
  return new Promise((resolve) => {
    const onMessage = (message: { figures?: ProcessFigures }) => {
      if (!message?.figures) return;
      worker.off('message', onMessage);
      resolve(message.figures);
    };
    worker.on('message', onMessage);
    worker.send('loop-report');
  });
}

/** A group's figures: CPU summed; delays, busy shares and pauses of the worst process. */
function combine(all: ProcessFigures[]): ProcessFigures {
  const max = (pick: (figures: ProcessFigures) => number) => Math.max(...all.map(pick));
  const sum = (pick: (figures: ProcessFigures) => number) => all.reduce((total, figures) => total + pick(figures), 0);
  return {
    p50: max((f) => f.p50),
    p99: max((f) => f.p99),
    max: max((f) => f.max),
    cpuMs: sum((f) => f.cpuMs),
    systemMs: sum((f) => f.systemMs),
    busy: max((f) => f.busy),
    busiestSecond: max((f) => f.busiestSecond),
    gc: {
      minor: { count: sum((f) => f.gc.minor.count), longest: max((f) => f.gc.minor.longest) },
      major: { count: sum((f) => f.gc.major.count), longest: max((f) => f.gc.major.longest) },
    },
  };
}
