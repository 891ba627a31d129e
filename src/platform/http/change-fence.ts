// After a request that may have written, a change fence (ChangeFeed.fence): caches of this process
// stop serving until the notices of what it committed are heard, so the client's next request never
// reads an entry its own write made stale. Sent before the answer leaves; routes that only read say
// `config: { readOnly: true }` and skip it, as do routes that tell the feed themselves which cached rows
// they changed (`config: { changesTold: true }`, ChangeFeed.committed: the conversation turns, whose
// settle tells it of the balance it charged).
import type { FastifyInstance } from 'fastify';
import type { ChangeFeed } from '../db/change-feed.js';
import { routeConfig } from './route-config.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes nothing, though its method is not GET (e.g. POST /api/user/refresh/profile). */
    readOnly?: boolean;
    /** The route tells the change feed itself which cached rows it changed (ChangeFeed.committed). */
    changesTold?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function registerChangeFence(app: FastifyInstance, feed: Pick<ChangeFeed, 'fence'>): void {
  // A callback hook, not an async one: it runs on every answer and needs no promise.
  app.addHook('onSend', (request, _reply, payload, done) => {
    const config = routeConfig(request);
    if (!SAFE_METHODS.has(request.method) && !config?.readOnly && !config?.changesTold) feed.fence();
    done(null, payload);
  });
}
