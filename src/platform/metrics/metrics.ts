// Prometheus metrics at /metrics: process defaults plus request counts and durations by route.
// One registry per app, so several apps in one process (tests) do not collide.
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function registerMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  // The labelled series of each (method, route, status), looked up once: hashing the labels on every
  // request costs more than counting. Routes are a fixed set, so the map stays small.
  const series = new Map<string, { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof duration.labels> }>();
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route} ${reply.statusCode}`;
    let found = series.get(key);
    if (!found) {
      found = { count: requests.labels(request.method, route, String(reply.statusCode)), time: duration.labels(request.method, route) };
      series.set(key, found);
    }
    found.count.inc();
    found.time.observe(reply.elapsedTime / 1000);
  });
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}
