import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { testTmpdir } from './test/support/memory-tmpdir.js';

// Most of a test file's time is spent waiting (on service processes, Chromium, sockets, timers), not on
// a core: files run in several workers even on two cores. Whatever two files running at once could share
// is made per file or per worker (test/support/worker-env.ts, database.ts, processes.ts).
// Files are not isolated from each other: a worker imports the service's modules once and runs its files
// one after another on them (imports were a third of the suite's CPU). What a file starts it closes, and
// no test replaces a module or a global, so nothing of one file reaches the next but module caches.
// The run's temporary folders in memory when the machine allows (test/support/memory-tmpdir.ts): set before
// the global set-up and the workers start, so they, the service processes and Chromium inherit it.
const tmpdir = testTmpdir();
if (tmpdir) process.env.TMPDIR = tmpdir;
const workers = Number(process.env.TEST_WORKERS ?? Math.max(3, availableParallelism()));

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/worker-env.ts'],
    pool: 'forks',
    isolate: false,
    maxWorkers: workers,
    // A hang's bound, not a speed check (benches measure speed): two busy cores can triple a test's time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
  },
});
