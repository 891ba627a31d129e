// A request's route config (`config` of the route's options, with its `url` and `method`), read without
// building `request.routeOptions`: Fastify makes that a new object of a dozen fields on every read, and
// the hooks of every request (auth guard, change fence, metrics) need only the config. The route's
// context is Fastify's own field; should a Fastify release rename it, the public getter is used.
import { createRequire } from 'node:module';
import type { FastifyContextConfig, FastifyRequest } from 'fastify';

const { kRouteContext } = createRequire(import.meta.url)('fastify/lib/symbols.js') as { kRouteContext?: symbol };

export type RouteConfig = FastifyContextConfig & { url?: string; method?: string };

/** The config of the request's route (the same object on every request of it); undefined for none. */
export function routeConfig(request: FastifyRequest): RouteConfig | undefined {
  const context = kRouteContext && (Reflect.get(request, kRouteContext) as { config?: RouteConfig } | undefined);
  return context ? context.config : (request.routeOptions.config as RouteConfig | undefined);
}
