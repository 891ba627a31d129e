// The session cache on its own: one resolution per token at a time, and a drop wins over a resolution
// that overlapped it. (auth.test.ts and passwords.test.ts check revocation through the routes.)
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVisitor, type Actor, type Caller } from '../../platform/http/actor.js';
import { createMemoryBus, type EventBus } from '../../platform/realtime/bus.js';
import { createSessionCache, type SessionCache } from './session-cache.js';

const actorOf = (userId: string, sessionId = `session-${userId}`): Actor => ({
  userId,
  sessionId,
  email: `${userId}@example.test`,
  accountType: 'user',
  twinId: null,
  role: null,
  permissions: [],
  launchScope: null,
  mustChangePassword: false,
});

/** The account a cached caller names (none for a visitor). */
const userOf = (caller: Caller | null) => (caller && !isVisitor(caller) ? caller.userId : undefined);

/** A resolver whose answers the test releases by hand, counting its calls. */
function gatedResolver(actor: Actor | null) {
  const waiting: Array<() => void> = [];
  let calls = 0;
  return {
    resolve: (_token: string) => {
      calls++;
      return new Promise<Actor | null>((resolve) => waiting.push(() => resolve(actor)));
    },
    release: () => waiting.splice(0).forEach((answer) => answer()),
    calls: () => calls,
  };
}

let bus: EventBus;
let cache: SessionCache;
beforeEach(async () => {
  bus = createMemoryBus();
  cache = await createSessionCache(bus, 60_000);
});
afterEach(async () => {
  await cache.close();
  await bus.close();
});

describe('session cache', () => {
  it('resolves a token once for all the requests that ask while it is being resolved, then serves it from memory', async () => {
    const resolver = gatedResolver(actorOf('ada'));
    const asked = Array.from({ length: 50 }, () => cache.load('token-a', resolver.resolve));
    resolver.release();
    const answers = await Promise.all(asked);
    expect(answers.every((actor) => userOf(actor) === 'ada')).toBe(true);
    expect(resolver.calls()).toBe(1);
    expect(userOf(await cache.load('token-a', resolver.resolve))).toBe('ada');
    expect(resolver.calls()).toBe(1);
  });

  it('keeps no answer for an invalid token: the next request checks it again', async () => {
    const resolver = gatedResolver(null);
    const first = cache.load('bad', resolver.resolve);
    resolver.release();
    expect(await first).toBeNull();
    const second = cache.load('bad', resolver.resolve);
    resolver.release();
    expect(await second).toBeNull();
    expect(resolver.calls()).toBe(2);
  });

  it('does not keep a resolution that overlapped a sign-out, and a request after the sign-out resolves afresh', async () => {
    const stale = gatedResolver(actorOf('ben', 'session-1'));
    const before = cache.load('token-b', stale.resolve);
    await cache.invalidate({ sessionIds: ['session-1'] });
    // Asked after the drop: not joined to the resolution that started before it.
    const revoked = gatedResolver(null);
    const after = cache.load('token-b', revoked.resolve);
    stale.release();
    revoked.release();
    expect(userOf(await before)).toBe('ben');
    expect(await after).toBeNull();
    expect(revoked.calls()).toBe(1);
    // Neither answer was kept: the next request resolves again.
    const again = gatedResolver(null);
    const next = cache.load('token-b', again.resolve);
    again.release();
    expect(await next).toBeNull();
    expect(again.calls()).toBe(1);
  });

  it('a failed resolution reaches every waiting request and is not kept', async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('database unavailable');
    };
    const results = await Promise.allSettled([cache.load('token-c', failing), cache.load('token-c', failing)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    await expect(cache.load('token-c', async () => actorOf('cy'))).resolves.toMatchObject({ userId: 'cy' });
  });

  it('resolves again once an entry has expired', async () => {
    const short = await createSessionCache(bus, 20);
    let calls = 0;
    const resolve = async () => (calls++, actorOf('dee'));
    await short.load('token-d', resolve);
    await short.load('token-d', resolve);
    expect(calls).toBe(1);
    await new Promise((done) => setTimeout(done, 40));
    await short.load('token-d', resolve);
    expect(calls).toBe(2);
    await short.close();
  });
});
