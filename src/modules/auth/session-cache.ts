// Keeps the resolved caller of recent tokens for a few seconds, so an authenticated request costs no
// database round trip. Any change that must take effect at once (sign-out, session deletion, role or
// status change) is announced on the bus and drops the entry in every process.
// When an entry expires while many requests of that token are in flight (a busy person, a client with
// many connections), they share one resolution instead of each checking the token and reading the
// session; a resolution that overlaps a drop is handed to its callers but not kept.
import { z } from 'zod';
import { isVisitor, type Caller } from '../../platform/http/actor.js';
import type { EventBus } from '../../platform/realtime/bus.js';

export const AUTH_INVALIDATE_CHANNEL = 'auth.invalidate';

/** Which cached callers a change makes stale: some sessions, or every session of a person. */
export const authInvalidation = z.union([z.object({ sessionIds: z.array(z.string()) }), z.object({ userId: z.string() })]);
export type AuthInvalidation = z.infer<typeof authInvalidation>;

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    'auth.invalidate': AuthInvalidation;
  }
}

export interface SessionCache {
  /** The cached caller of `token`, if it is cached and fresh (no resolution). */
  peek(token: string): Caller | undefined;
  /** The cached caller of `token`, or `resolve`'s (one resolution at a time per token, kept when it found one). */
  load(token: string, resolve: (token: string) => Promise<Caller | null>): Promise<Caller | null>;
  /** Drops the entries here and announces the change to every other process. */
  invalidate(change: AuthInvalidation): Promise<void>;
  close(): Promise<void>;
}

export async function createSessionCache(bus: EventBus, ttlMs = 5_000, maxEntries = 50_000): Promise<SessionCache> {
  const entries = new Map<string, { actor: Caller; expires: number }>();
  const resolving = new Map<string, Promise<Caller | null>>();
  // Counts drops: a resolution that started before one may have read what the drop was about.
  let drops = 0;

  const drop = (change: AuthInvalidation) => {
    drops++;
    resolving.clear();
    for (const [token, entry] of entries) {
      const hit = 'userId' in change ? principalOf(entry.actor) === change.userId : change.sessionIds.includes(entry.actor.sessionId);
      if (hit) entries.delete(token);
    }
  };
  const unsubscribe = await bus.subscribe(AUTH_INVALIDATE_CHANNEL, drop, { schema: authInvalidation });

  const cached = (token: string) => {
    const entry = entries.get(token);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      entries.delete(token);
      return undefined;
    }
    return entry.actor;
  };
  const keep = (token: string, actor: Caller) => {
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(token, { actor, expires: Date.now() + ttlMs });
  };

  return {
    peek: cached,
    load(token, resolve) {
      const actor = cached(token);
      if (actor) return Promise.resolve(actor);
      const pending = resolving.get(token);
      if (pending) return pending;
      const dropsBefore = drops;
      const resolution = resolve(token).then(
        (found) => {
          if (resolving.get(token) === resolution) resolving.delete(token);
          if (found && drops === dropsBefore) keep(token, found);
          return found;
        },
        (error: unknown) => {
          if (resolving.get(token) === resolution) resolving.delete(token);
          throw error;
        },
      );
      resolving.set(token, resolution);
      return resolution;
    },
    async invalidate(change) {
      drop(change);
      await bus.publish(AUTH_INVALIDATE_CHANNEL, change);
    },
    close: () => unsubscribe(),
  };
}

/** The account, or the visitor, a cached caller stands for (a person-wide drop names it). */
function principalOf(caller: Caller): string {
  return isVisitor(caller) ? caller.visitorId : caller.userId;
}
