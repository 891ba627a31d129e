import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Most of a test file's time is spent waiting (on service processes, Chromium, sockets, timers), not on
// a core: files run in several workers even on two cores. Whatever two files running at once could share
// is made per file or per worker (test/support/worker-env.ts, database.ts, processes.ts).
const workers = Number(process.env.TEST_WORKERS ?? Math.max(3, availableParallelism()));

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/worker-env.ts'],
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
  },
});
