// After a request that may have written, a change fence (ChangeFeed.fence): caches of this process
// stop serving until the notices of what it committed are heard, so the client's next request never
// reads an entry its own write made stale. Sent before the answer leaves; routes that only read say
// `config: { readOnly: true }` and skip it.
import type { FastifyInstance } from 'fastify';
import type { ChangeFeed } from '../db/change-feed.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes nothing, though its method is not GET (e.g. POST /api/user/refresh/profile). */
    readOnly?: boolean;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function registerChangeFence(app: FastifyInstance, feed: Pick<ChangeFeed, 'fence'>): void {
  // A callback hook, not an async one: it runs on every answer and needs no promise.
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (!SAFE_METHODS.has(request.method) && !request.routeOptions.config?.readOnly) feed.fence();
    done(null, payload);
  });
}
