import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createEventBus, createMemoryBus, createRedisBus, type EventBus } from './bus.js';

/** Any channel, any message: these tests are about delivery, not the service's channels. */
type AnyEvents = Record<string, unknown>;

const redisUrl = process.env.TEST_REDIS_URL;

/** Unique per test, so parallel runs against one Redis never see each other's messages. */
function channelName(label: string): string {
  return `test:${label}:${randomBytes(6).toString('hex')}`;
}

/** Records what a handler receives; until(n) waits for the n-th message without racing the publish (one waiter at a time). */
function collector(): { handler: (message: unknown) => void; received: unknown[]; until(count: number, timeoutMs?: number): Promise<void> } {
  const received: unknown[] = [];
  let notify = (): void => {};
  return {
    received,
    handler(message) {
      received.push(message);
      notify();
    },
    until(count, timeoutMs = 2_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Got ${received.length} of ${count} messages`)), timeoutMs);
        notify = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          resolve();
        };
        notify();
      });
    },
  };
}

/** Lets setImmediate-based delivery (memory) or a Redis round trip (redis) happen. */
async function settle(bus: EventBus<AnyEvents>): Promise<void> {
  const probe = channelName('settle');
  const seen = collector();
  const off = await bus.subscribe(probe, seen.handler);
  await bus.publish(probe, 'probe');
  // Messages are delivered in order on one connection, so once the probe arrives the earlier ones have.
  await seen.until(1);
  await off();
}

describe('createMemoryBus', () => {
  let bus: EventBus<AnyEvents>;

  afterEach(async () => {
    await bus.close();
  });

  it('delivers published messages to a subscriber, asynchronously and as a copy', async () => {
    bus = createMemoryBus<AnyEvents>();
    expect(bus.kind).toBe('memory');
    const channel = channelName('memory');
    const seen = collector();
    await bus.subscribe(channel, seen.handler);

    const message = { turnId: 't1', at: new Date(0), nested: { list: [1, 2] } };
    await bus.publish(channel, message);
    expect(seen.received).toEqual([]);

    await seen.until(1);
    const received = seen.received[0];
    // JSON round trip, as over Redis: a Date becomes its ISO string, and the object is not shared.
    expect(received).toEqual({ turnId: 't1', at: '1970-01-01T00:00:00.000Z', nested: { list: [1, 2] } });
    expect(received).not.toBe(message);
  });

  it('fans out to several handlers and only on the right channel', async () => {
    bus = createMemoryBus<AnyEvents>();
    const channel = channelName('fanout');
    const a = collector();
    const b = collector();
    const other = collector();
    await bus.subscribe(channel, a.handler);
    await bus.subscribe(channel, b.handler);
    await bus.subscribe(channelName('other'), other.handler);

    // The publisher learns how many subscribers it reached: here, the two handlers of the channel.
    expect(await bus.publish(channel, { n: 1 })).toBe(2);
    await bus.publish(channel, { n: 2 });
    expect(await bus.publish(channelName('nobody'), { n: 3 })).toBe(0);
    await settle(bus);

    expect(a.received).toEqual([{ n: 1 }, { n: 2 }]);
    expect(b.received).toEqual([{ n: 1 }, { n: 2 }]);
    expect(other.received).toEqual([]);
  });

  it('stops delivering to a handler once it unsubscribes, and keeps the others', async () => {
    bus = createMemoryBus<AnyEvents>();
    const channel = channelName('unsub');
    const a = collector();
    const b = collector();
    const offA = await bus.subscribe(channel, a.handler);
    await bus.subscribe(channel, b.handler);

    await bus.publish(channel, 1);
    await settle(bus);
    await offA();
    await offA(); // idempotent
    await bus.publish(channel, 2);
    await settle(bus);

    expect(a.received).toEqual([1]);
    expect(b.received).toEqual([1, 2]);
  });

  it('does not deliver to a handler that subscribes after the publish', async () => {
    bus = createMemoryBus<AnyEvents>();
    const channel = channelName('late');
    const late = collector();
    await bus.publish(channel, 'early');
    await bus.subscribe(channel, late.handler);
    await settle(bus);
    expect(late.received).toEqual([]);
  });

  it('isolates a throwing handler and reports it through onError', async () => {
    const onError = vi.fn();
    bus = createMemoryBus<AnyEvents>({ onError });
    const channel = channelName('throw');
    const good = collector();
    await bus.subscribe(channel, () => {
      throw new Error('handler bug');
    });
    await bus.subscribe(channel, async () => {
      throw new Error('async handler bug');
    });
    await bus.subscribe(channel, good.handler);

    await bus.publish(channel, 'still delivered');
    await settle(bus);

    expect(good.received).toEqual(['still delivered']);
    expect(onError).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'handler bug' }), { channel });
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'async handler bug' }), { channel });
  });

  it('refuses messages that are not JSON-serialisable, and use after close', async () => {
    bus = createMemoryBus<AnyEvents>();
    await expect(bus.publish(channelName('bad'), undefined)).rejects.toThrow(/JSON-serialisable/);
    await expect(bus.publish(channelName('bad'), { big: 1n })).rejects.toThrow(TypeError);
    await bus.close();
    await expect(bus.publish(channelName('closed'), 1)).rejects.toThrow(/closed/);
  });

  it('hands a listener only what matches its subscription schema, and reports the rest', async () => {
    const onError = vi.fn();
    bus = createMemoryBus<AnyEvents>({ onError });
    const channel = channelName('schema');
    const checked = collector();
    const unchecked = collector();
    await bus.subscribe(channel, checked.handler, { schema: z.object({ userId: z.string() }) });
    await bus.subscribe(channel, unchecked.handler);

    await bus.publish(channel, { userId: 7 });
    await bus.publish(channel, { userId: 'u1', extra: true });
    await settle(bus);

    expect(checked.received).toEqual([{ userId: 'u1' }]);
    expect(unchecked.received).toEqual([{ userId: 7 }, { userId: 'u1', extra: true }]);
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining(`A message on ${channel} does not match its schema`) }), { channel });
  });

  it('createEventBus picks memory without a Redis URL', async () => {
    bus = await createEventBus<AnyEvents>({});
    expect(bus.kind).toBe('memory');
  });
});

describe('channel types', () => {
  /** A map as a family declares it: fixed channels and a family of channels carrying an id. */
  interface Events {
    'demo.cancel': { turnId: string };
    [reply: `demo.reply.${string}`]: { n: number };
  }

  it('checks channels and messages at compile time; a listener gets the declared type without casting', async () => {
    const bus = createMemoryBus<Events>();
    const got: number[] = [];
    const replyTo = (asker: string) => `demo.reply.${asker}` as const;
    await bus.subscribe(replyTo('p1'), (reply) => got.push(reply.n));
    await bus.subscribe('demo.cancel', (cancel) => cancel.turnId.toUpperCase());
    expect(await bus.publish(replyTo('p1'), { n: 1 })).toBe(1);
    // Checked by the compiler only (never called): each line fails to compile without its comment.
    const refused = () => [
      // @ts-expect-error: a channel nobody declared
      bus.publish('demo.unknown', { n: 1 }),
      // @ts-expect-error: a message of another shape than the channel's
      bus.publish('demo.cancel', { turnId: 1 }),
      // @ts-expect-error: a family's channel carries its family's message
      bus.publish(replyTo('p1'), { turnId: 'x' }),
      // @ts-expect-error: a listener of a channel nobody declared
      bus.subscribe('demo.unknown', () => {}),
    ];
    expect(typeof refused).toBe('function');
    await vi.waitFor(() => expect(got).toEqual([1]));
    await bus.close();
  });
});

describe.runIf(redisUrl)('createRedisBus', () => {
  const url = redisUrl ?? '';
  const buses: EventBus<AnyEvents>[] = [];

  async function open(): Promise<EventBus<AnyEvents>> {
    const bus = await createRedisBus<AnyEvents>(url);
    buses.push(bus);
    return bus;
  }

  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });

  it('carries a message from one bus instance to a subscriber on another, as between two processes', async () => {
    const api = await open();
    const worker = await open();
    expect(api.kind).toBe('redis');
    const channel = channelName('cancel');
    const seen = collector();
    await worker.subscribe(channel, seen.handler);

    await api.publish(channel, { type: 'turn.cancel', turnId: 'abc', at: new Date(0) });
    await seen.until(1);
    expect(seen.received[0]).toEqual({ type: 'turn.cancel', turnId: 'abc', at: '1970-01-01T00:00:00.000Z' });
  });

  it('checks a message from another process against the subscription schema on arrival', async () => {
    const api = await open();
    const onError = vi.fn();
    const worker = await createRedisBus<AnyEvents>(url, { onError });
    buses.push(worker);
    const channel = channelName('checked');
    const seen = collector();
    await worker.subscribe(channel, seen.handler, { schema: z.object({ approvalId: z.string() }) });

    await api.publish(channel, { approvalId: 42 });
    await api.publish(channel, { approvalId: 'a1' });
    await seen.until(1);
    expect(seen.received).toEqual([{ approvalId: 'a1' }]);
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('fans out to several handlers and several instances, isolating a throwing handler', async () => {
    const publisher = await open();
    const onError = vi.fn();
    const first = await createRedisBus<AnyEvents>(url, { onError });
    buses.push(first);
    const second = await open();
    const channel = channelName('fanout');
    const a = collector();
    const b = collector();
    const c = collector();
    await first.subscribe(channel, () => {
      throw new Error('handler bug');
    });
    await first.subscribe(channel, a.handler);
    await first.subscribe(channel, b.handler);
    await second.subscribe(channel, c.handler);

    // Redis counts the connections it delivered to: one per bus (two), however many handlers each has.
    expect(await publisher.publish(channel, 'hello')).toBe(2);
    await publisher.publish(channel, 'again');
    expect(await publisher.publish(channelName('nobody'), 'lost')).toBe(0);
    await Promise.all([a.until(2), b.until(2), c.until(2)]);

    expect(a.received).toEqual(['hello', 'again']);
    expect(b.received).toEqual(['hello', 'again']);
    expect(c.received).toEqual(['hello', 'again']);
    expect(onError).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'handler bug' }), { channel });
  });

  it('unsubscribes the Redis channel only when its last handler leaves', async () => {
    const publisher = await open();
    const subscriber = await open();
    const channel = channelName('unsub');
    const a = collector();
    const b = collector();
    const offA = await subscriber.subscribe(channel, a.handler);
    const offB = await subscriber.subscribe(channel, b.handler);

    // PUBSUB NUMSUB counts connections subscribed to the channel: one per bus, however many handlers.
    const probe = await createProbe(url);
    try {
      expect(await probe.numsub(channel)).toBe(1);
      await offA();
      expect(await probe.numsub(channel)).toBe(1);

      await publisher.publish(channel, 'only b');
      await b.until(1);
      expect(a.received).toEqual([]);
      expect(b.received).toEqual(['only b']);

      await offB();
      expect(await probe.numsub(channel)).toBe(0);

      // And the channel can be joined again afterwards.
      const again = collector();
      await subscriber.subscribe(channel, again.handler);
      await publisher.publish(channel, 'back');
      await again.until(1);
      expect(again.received).toEqual(['back']);
    } finally {
      await probe.close();
    }
  });

  it('createEventBus picks Redis with a URL, and close() ends both connections', async () => {
    const bus = await createEventBus<AnyEvents>({ redisUrl: url });
    expect(bus.kind).toBe('redis');
    await bus.close();
    await bus.close(); // idempotent
    await expect(bus.publish(channelName('closed'), 1)).rejects.toThrow(/closed/);
  });

  it('rejects quickly when Redis cannot be reached', async () => {
    await expect(createRedisBus('redis://127.0.0.1:1', { onError: () => {} })).rejects.toThrow();
  });
});

/** A plain connection that asks Redis how many subscribers a channel has. */
async function createProbe(url: string): Promise<{ numsub(channel: string): Promise<number>; close(): Promise<void> }> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url);
  return {
    async numsub(channel) {
      const reply = (await client.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
      return Number(reply[1]);
    },
    async close() {
      await client.quit();
    },
  };
}
