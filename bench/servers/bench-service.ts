// What both service benches start: the service as deployed (one API process; PostgreSQL when
// BENCH_DATABASE_URL is set, else PGlite) with one person of their own twin, created directly so any
// database (fresh or reused) will do, signed in through the real route. Reports to the parent process
// and exits normally when asked (so --cpu-prof can write its profile).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { insertInstitution, insertMembership } from '../../src/modules/institutions/institutions.repo.js';
import { insertUser, updateUser } from '../../src/modules/users/users.repo.js';
import { openPlatform } from '../../src/platform/platform.js';

const PASSWORD = 'bench-password';

export async function startBenchService(options: { env?: Record<string, string>; role: 'user' | 'admin'; credits?: number }): Promise<void> {
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const config = loadConfig({
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'dt-bench-')),
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    REDIS_URL: process.env.BENCH_REDIS_URL ?? '',
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const platform = await openPlatform(config, { info: () => {}, error: () => {} });
  const db = platform.database.db;
  const user = await insertUser(db, { email, passwordHash: await hashPassword(PASSWORD), fname: 'Bench', credits: options.credits ?? 0 });
  const twin = await insertInstitution(db, { name: `Bench twin ${email}` });
  await insertMembership(db, { institutionId: twin.id, userId: user.id, role: options.role });
  await updateUser(db, user.id, { currentInstitutionId: twin.id });

  const app = await buildApp({ ...platform, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const signIn = await app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email, password: PASSWORD } });
  const address = app.server.address();
  // The event loop's delay, per scenario: how long ready work waited for the process.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  // The process's CPU time (every thread: JavaScript, garbage collection, compilation, the kernel's share) since the reset.
  let cpuSince = process.cpuUsage();
  // How busy the main thread (the event loop: every request, piece and socket of the process) was: over
  // the scenario, and in its busiest second. Near 1, work queues behind work and every wait grows.
  let busySince = performance.eventLoopUtilization();
  let busiestSecond = 0;
  let lastSecond = busySince;
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    busiestSecond = Math.max(busiestSecond, performance.eventLoopUtilization(now, lastSecond).utilization);
    lastSecond = now;
  }, 1_000).unref();
  // The garbage collector's pauses of the main thread: a full collection's pause, at a busy peak, holds
  // every turn arriving then, and the queue behind it takes several times as long to drain.
  const emptyPauses = () => ({ minor: { count: 0, longest: 0 }, major: { count: 0, longest: 0 } });
  let pauses = emptyPauses();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      const bucket = kind === constants.NODE_PERFORMANCE_GC_MAJOR ? pauses.major : kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.minor : undefined;
      if (!bucket) continue;
      bucket.count++;
      bucket.longest = Math.max(bucket.longest, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('message', (message) => {
    if (message === 'exit') process.exit(0);
    if (message === 'loop-reset') {
      pauses = emptyPauses();
      loop.reset();
      cpuSince = process.cpuUsage();
      busySince = performance.eventLoopUtilization();
      busiestSecond = 0;
    }
    if (message === 'loop-report') {
      const cpu = process.cpuUsage(cpuSince);
      const busy = performance.eventLoopUtilization(busySince).utilization;
      process.send?.({
        loop: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, cpuMs: (cpu.user + cpu.system) / 1e3, systemMs: cpu.system / 1e3, busy, busiestSecond: Math.max(busy, busiestSecond), gc: pauses },
      });
    }
  });
  process.send?.({
    port: typeof address === 'object' && address ? address.port : 0,
    token: (signIn.json() as { token: string }).token,
    userId: user.id,
    database: platform.database.kind,
  });
}
