// Throttling of failed sign-in attempts: failures are counted per account (email) and per client
// address in a sliding-free fixed window; past the limit every attempt answers 429 until the window
// ends. Counters live in Redis when the service is scaled (shared by all processes), else in memory.
import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '../../platform/http/errors.js';

export interface AuthLimits {
  /** Failed passwords or codes per account within the window before 429. */
  accountFailures: number;
  /** Failed passwords or codes per client address within the window before 429. */
  ipFailures: number;
  windowSeconds: number;
  /** Wrong codes that end one pending two-step sign-in. */
  codeAttempts: number;
  /** Codes mailed for one pending sign-in. */
  codeSends: number;
  /** Requests per minute per address to the /api/auth routes (any outcome). */
  requestsPerMinute: number;
  /** Prefix of the counter keys (tests give each app its own). */
  keyPrefix: string;
}

export const DEFAULT_AUTH_LIMITS: AuthLimits = {
  accountFailures: 10,
  ipFailures: 50,
  windowSeconds: 15 * 60,
  codeAttempts: 5,
  codeSends: 5,
  requestsPerMinute: 120,
  keyPrefix: 'dt:',
};

interface CounterStore {
  get(key: string): Promise<number>;
  increment(key: string, windowSeconds: number): Promise<number>;
  clear(key: string): Promise<void>;
}

function memoryStore(): CounterStore {
  const counters = new Map<string, { count: number; resetAt: number }>();
  const live = (key: string) => {
    const entry = counters.get(key);
    if (entry && entry.resetAt <= Date.now()) counters.delete(key);
    return counters.get(key);
  };
  return {
    async get(key) {
      return live(key)?.count ?? 0;
    },
    async increment(key, windowSeconds) {
      const entry = live(key) ?? { count: 0, resetAt: Date.now() + windowSeconds * 1000 };
      entry.count += 1;
      counters.set(key, entry);
      if (counters.size > 100_000) counters.delete(counters.keys().next().value!);
      return entry.count;
    },
    async clear(key) {
      counters.delete(key);
    },
  };
}

function redisStore(redis: Redis): CounterStore {
  return {
    async get(key) {
      return Number((await redis.get(key)) ?? 0);
    },
    async increment(key, windowSeconds) {
      const [[, count]] = (await redis.multi().incr(key).expire(key, windowSeconds, 'NX').exec()) as [[Error | null, number]];
      return count;
    },
    async clear(key) {
      await redis.del(key);
    },
  };
}

export interface AttemptKeys {
  /** The account's email, lowercased; absent when the attempt names no account. */
  account?: string;
  ip: string;
}

export interface Throttle {
  readonly limits: AuthLimits;
  /** Throws 429 when either counter is at its limit. Call before checking the secret. */
  check(keys: AttemptKeys): Promise<void>;
  /** Records a failure against both counters. */
  fail(keys: AttemptKeys): Promise<void>;
  /** A success clears the account's counter (not the address's). */
  succeed(account: string): Promise<void>;
}

export function createThrottle(limits: AuthLimits, redis?: Redis): Throttle {
  const store = redis ? redisStore(redis) : memoryStore();
  const accountKey = (email: string) => `${limits.keyPrefix}auth:fail:acct:${email.toLowerCase()}`;
  const ipKey = (ip: string) => `${limits.keyPrefix}auth:fail:ip:${ip}`;
  return {
    limits,
    async check({ account, ip }) {
      const [byAccount, byIp] = await Promise.all([account ? store.get(accountKey(account)) : 0, store.get(ipKey(ip))]);
      if (byAccount >= limits.accountFailures || byIp >= limits.ipFailures) throw new TooManyRequestsError();
    },
    async fail({ account, ip }) {
      await Promise.all([
        account ? store.increment(accountKey(account), limits.windowSeconds) : undefined,
        store.increment(ipKey(ip), limits.windowSeconds),
      ]);
    },
    async succeed(account) {
      await store.clear(accountKey(account));
    },
  };
}

/** Runs `attempt` under the throttle: 429 when over the limit, a failure counted when it throws `isFailure`. */
export async function throttled<T>(
  throttle: Throttle,
  keys: AttemptKeys,
  attempt: () => Promise<T>,
  isFailure: (error: unknown) => boolean,
): Promise<T> {
  await throttle.check(keys);
  try {
    const result = await attempt();
    if (keys.account) await throttle.succeed(keys.account);
    return result;
  } catch (error) {
    if (isFailure(error)) await throttle.fail(keys);
    throw error;
  }
}
