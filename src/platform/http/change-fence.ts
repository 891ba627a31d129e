// After a request that may have written, a change fence (ChangeFeed.fence): caches of this process
// stop serving until the notices of what it committed are heard, so the client's next request never
// reads an entry its own write made stale. Sent before the answer leaves; routes that only read say
// `config: { readOnly: true }` and skip it, as do routes that tell the feed themselves which cached rows
// they changed (`config: { changesTold: true }`, ChangeFeed.committed: the conversation turns, whose
// settle tells it of the balance it charged).
//
// The fence is a hook of the routes that may write only (worked out as each route is added), not of
// every request: a route that only reads (GET, or `readOnly`) runs no onSend hook at all, which spares
// each of its answers Fastify's onSend step (docs/decisions.md, "HTTP").
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import type { ChangeFeed } from '../db/change-feed.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes nothing, though its method is not GET (e.g. POST /api/user/refresh/profile). */
    readOnly?: boolean;
    /** The route tells the change feed itself which cached rows it changed (ChangeFeed.committed). */
    changesTold?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a route with these methods and config may write, and so needs the fence after it. */
export function mayWrite(methods: string | string[], config: { readOnly?: boolean; changesTold?: boolean } | undefined): boolean {
  if (config?.readOnly || config?.changesTold) return false;
  return (Array.isArray(methods) ? methods : [methods]).some((method) => !SAFE_METHODS.has(method.toUpperCase()));
}

/** Adds the fence to every route added from now on (here and in plugins registered later) that may write. */
export function registerChangeFence(app: FastifyInstance, feed: Pick<ChangeFeed, 'fence'>): void {
  // A callback hook, not an async one; a route taking several methods fences after its unsafe ones only.
  const fence: onSendHookHandler = (request, _reply, payload, done) => {
    if (!SAFE_METHODS.has(request.method)) feed.fence();
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    if (!mayWrite(route.method, route.config)) return;
    const own = route.onSend;
    route.onSend = own === undefined ? [fence] : [...(Array.isArray(own) ? own : [own]), fence];
  });
}
