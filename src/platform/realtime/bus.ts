// The event bus for messages between processes: cancel a turn, tool approvals, session revocation,
// socket fan-out. Redis pub/sub when REDIS_URL is set; otherwise an in-process bus that mimics it
// (asynchronous delivery, JSON copies), so single-process code behaves the same as in production.
// Channels are typed: BusEvents maps each channel to its message, so a publisher is checked at compile
// time and a listener receives the declared type without casting.
import type { Redis } from 'ioredis';
import type { z } from 'zod';

/**
 * Every channel of the bus → the message it carries, as it arrives (after a JSON round trip: a Date
 * arrives as a string, so declare strings). The platform cannot import the families, so each family
 * declares its own channels beside their payload:
 *
 *   declare module '../../platform/realtime/bus.js' { interface BusEvents { 'auth.invalidate': AuthInvalidation } }
 *
 * A family of channels whose name carries an id (per process, per person, per answer) is declared once
 * with a template literal key: [channel: `turn.handoff.${string}`]: HandoffReply.
 * `grep -rn "interface BusEvents" src` lists them all.
 */
export interface BusEvents {}

/** A map of channels to messages: BusEvents for the service, another for tests of the bus itself. */
export type EventMap = object;

export type BusHandler<T = unknown> = (message: T) => void;

export interface SubscribeOptions<T> {
  /**
   * Checked on arrival, before the handler: a message that does not match is reported to onError and
   * dropped. For channels that cross processes and are not on a streaming path (a schema costs a parse
   * per message and per handler).
   */
  schema?: z.ZodType<T>;
}

export interface EventBus<M extends EventMap = BusEvents> {
  /**
   * Delivery is at-most-once and only to handlers subscribed at that moment, as with Redis pub/sub.
   * Resolves with how many subscribers it reached: processes subscribed to the channel (Redis counts
   * connections, one per bus), or handlers of this process for the memory bus.
   */
  publish<C extends keyof M & string>(channel: C, message: M[C]): Promise<number>;
  /** Resolves once the subscription is live; the returned function removes this handler only. */
  subscribe<C extends keyof M & string>(channel: C, handler: BusHandler<M[C]>, options?: SubscribeOptions<M[C]>): Promise<() => Promise<void>>;
  close(): Promise<void>;
  readonly kind: 'memory' | 'redis';
  /**
   * The Redis bus's command connection (its publisher): the one Redis client of the process for other
   * commands (rate limits and sign-in throttling, the Socket.IO adapter's publisher). Closed by close().
   */
  readonly redis?: Redis;
}

export interface BusOptions {
  /** Told about handlers that throw, payloads that are not JSON and Redis connection errors. */
  onError?: (error: unknown, context: { channel?: string }) => void;
}

function defaultOnError(error: unknown, context: { channel?: string }): void {
  console.error(`[event-bus] error${context.channel ? ` on ${context.channel}` : ''}:`, error);
}

/** JSON text of a message; refuses what Redis could not carry, so the memory bus fails the same way. */
function encode(message: unknown): string {
  const payload = JSON.stringify(message);
  if (payload === undefined) throw new TypeError('Bus messages must be JSON-serialisable (got undefined or a function)');
  return payload;
}

/** Handlers per channel, shared by both buses; each handler gets its own parsed copy of the payload. */
class HandlerRegistry {
  readonly channels = new Map<string, Set<BusHandler>>();

  constructor(private readonly onError: NonNullable<BusOptions['onError']>) {}

  /** A subscription's own handler: the message checked against its schema, when it has one, before it is handed on. */
  entry<T>(channel: string, handler: BusHandler<T>, options: SubscribeOptions<T> = {}): BusHandler {
    const { schema } = options;
    // The one place a message's type is asserted: the channel's declared type, or the schema's output.
    if (!schema) return (message) => handler(message as T);
    return (message) => {
      const checked = schema.safeParse(message);
      if (checked.success) handler(checked.data);
      else this.onError(new TypeError(`A message on ${channel} does not match its schema: ${checked.error.message}`), { channel });
    };
  }

  /** Handlers subscribed right now; the memory bus fixes its recipients at publish time, like Redis. */
  snapshot(channel: string): BusHandler[] {
    return [...(this.channels.get(channel) ?? [])];
  }

  dispatch(channel: string, payload: string, recipients = this.snapshot(channel)): void {
    const current = this.channels.get(channel);
    for (const handler of recipients) {
      // Unsubscribed since (possibly by an earlier handler in this same dispatch): skip it.
      if (!current?.has(handler)) continue;
      try {
        const result: unknown = handler(JSON.parse(payload));
        // Async handlers are allowed by the void return type; their rejections must not go unhandled.
        if (result instanceof Promise) result.catch((error: unknown) => this.onError(error, { channel }));
      } catch (error) {
        this.onError(error, { channel });
      }
    }
  }
}

export function createMemoryBus<M extends EventMap = BusEvents>(opts: BusOptions = {}): EventBus<M> {
  const registry = new HandlerRegistry(opts.onError ?? defaultOnError);
  let closed = false;

  return {
    kind: 'memory',
    async publish(channel, message) {
      if (closed) throw new Error('Event bus is closed');
      const payload = encode(message);
      const recipients = registry.snapshot(channel);
      // Never synchronous: a publisher must not rely on handlers having run when publish returns.
      setImmediate(() => registry.dispatch(channel, payload, recipients));
      return recipients.length;
    },
    async subscribe(channel, handler, options) {
      if (closed) throw new Error('Event bus is closed');
      let handlers = registry.channels.get(channel);
      if (!handlers) registry.channels.set(channel, (handlers = new Set()));
      // Wrap so the same function subscribed twice gets two independent subscriptions.
      const entry = registry.entry(channel, handler, options);
      handlers.add(entry);
      return async () => {
        handlers.delete(entry);
        if (handlers.size === 0 && registry.channels.get(channel) === handlers) registry.channels.delete(channel);
      };
    },
    async close() {
      closed = true;
      registry.channels.clear();
    },
  };
}

export async function createRedisBus<M extends EventMap = BusEvents>(redisUrl: string, opts: BusOptions = {}): Promise<EventBus<M>> {
  const onError = opts.onError ?? defaultOnError;
  const registry = new HandlerRegistry(onError);
  // A connection in subscriber mode can run no other command, hence two.
  // Loaded here, not at the top: the embedded shape never needs it (~0.1 s of a start and ~1.6 MB).
  const { Redis } = await import('ioredis');
  const publisher = new Redis(redisUrl, { lazyConnect: true });
  const subscriber = new Redis(redisUrl, { lazyConnect: true });
  for (const connection of [publisher, subscriber]) connection.on('error', (error: unknown) => onError(error, {}));
  // SUBSCRIBE in flight per channel, so a second subscriber waits until the channel is live too.
  const pending = new Map<string, Promise<unknown>>();
  let closed = false;

  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
  } catch (error) {
    publisher.disconnect();
    subscriber.disconnect();
    throw error;
  }
  subscriber.on('message', (channel: string, payload: string) => registry.dispatch(channel, payload));

  return {
    kind: 'redis',
    redis: publisher,
    async publish(channel, message) {
      if (closed) throw new Error('Event bus is closed');
      return publisher.publish(channel, encode(message));
    },
    async subscribe(channel, handler, options) {
      if (closed) throw new Error('Event bus is closed');
      let handlers = registry.channels.get(channel);
      if (!handlers) {
        registry.channels.set(channel, (handlers = new Set()));
        pending.set(channel, subscriber.subscribe(channel));
      }
      const entry = registry.entry(channel, handler, options);
      handlers.add(entry);
      try {
        await pending.get(channel);
      } catch (error) {
        handlers.delete(entry);
        if (handlers.size === 0 && registry.channels.get(channel) === handlers) {
          registry.channels.delete(channel);
          pending.delete(channel);
        }
        throw error;
      }
      let active = true;
      return async () => {
        if (!active) return;
        active = false;
        handlers.delete(entry);
        if (handlers.size > 0 || registry.channels.get(channel) !== handlers) return;
        registry.channels.delete(channel);
        pending.delete(channel);
        // Commands on one connection run in order, so a SUBSCRIBE sent after this still wins.
        if (!closed) await subscriber.unsubscribe(channel);
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      registry.channels.clear();
      pending.clear();
      await Promise.all([quit(publisher), quit(subscriber)]);
    },
  };
}

async function quit(connection: Redis): Promise<void> {
  try {
    await connection.quit();
  } catch {
    // Already gone (e.g. the server went away): dropping the socket is all that is left to do.
    connection.disconnect();
  }
}

/** The Redis bus when a URL is configured, so several API and worker processes share messages. */
export async function createEventBus<M extends EventMap = BusEvents>(opts: { redisUrl?: string } & BusOptions): Promise<EventBus<M>> {
  const { redisUrl, ...busOptions } = opts;
  return redisUrl ? createRedisBus<M>(redisUrl, busOptions) : createMemoryBus<M>(busOptions);
}
