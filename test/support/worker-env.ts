// Runs in each test worker before its files (vitest runs files in parallel workers): what two files
// running at once must not share is made the worker's own here. Redis keys (the sign-in throttle's and
// the rate limit's counters of service processes, which count per client address and all run on
// 127.0.0.1) go to a Redis database per worker; pub/sub channels span databases, and the service's carry
// ids or are answered by every process, so files running at once can share them.
import { afterAll } from 'vitest';
import { killStrayProcesses } from './processes.js';

// After each file's own after-hooks (setup files' hooks run last): no service process outlives its file.
afterAll(() => killStrayProcesses());

const redisUrl = process.env.TEST_REDIS_URL;
const worker = Number(process.env.VITEST_POOL_ID ?? '1');
if (redisUrl) {
  const url = new URL(redisUrl);
  // Database 0 stays the run's default; workers take 1 to 15 (Redis has 16 unless configured otherwise).
  url.pathname = `/${((worker - 1) % 15) + 1}`;
  process.env.TEST_REDIS_URL = url.toString();
}
