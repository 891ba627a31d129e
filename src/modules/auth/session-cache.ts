// Keeps the resolved caller of recent tokens for a few seconds, so an authenticated request costs no
// database round trip. Any change that must take effect at once (sign-out, session deletion, role or
// status change) is announced on the bus and drops the entry in every process.
import type { Actor } from '../../platform/http/actor.js';
import type { EventBus } from '../../platform/realtime/bus.js';

export const AUTH_INVALIDATE_CHANNEL = 'auth.invalidate';

export type AuthInvalidation = { sessionIds: string[] } | { userId: string };

export interface SessionCache {
  get(token: string): Actor | undefined;
  set(token: string, actor: Actor): void;
  /** Drops the entries here and announces the change to every other process. */
  invalidate(change: AuthInvalidation): Promise<void>;
  close(): Promise<void>;
}

export async function createSessionCache(bus: EventBus, ttlMs = 5_000, maxEntries = 50_000): Promise<SessionCache> {
  const entries = new Map<string, { actor: Actor; expires: number }>();

  const drop = (change: AuthInvalidation) => {
    for (const [token, entry] of entries) {
      const hit = 'userId' in change ? entry.actor.userId === change.userId : change.sessionIds.includes(entry.actor.sessionId);
      if (hit) entries.delete(token);
    }
  };
  const unsubscribe = await bus.subscribe(AUTH_INVALIDATE_CHANNEL, (message) => drop(message as AuthInvalidation));

  return {
    get(token) {
      const entry = entries.get(token);
      if (!entry) return undefined;
      if (entry.expires < Date.now()) {
        entries.delete(token);
        return undefined;
      }
      return entry.actor;
    },
    set(token, actor) {
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(token, { actor, expires: Date.now() + ttlMs });
    },
    async invalidate(change) {
      drop(change);
      await bus.publish(AUTH_INVALIDATE_CHANNEL, change);
    },
    close: () => unsubscribe(),
  };
}
