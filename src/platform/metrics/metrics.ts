// Prometheus metrics at /metrics: process defaults plus request counts and durations by route.
// One registry per app, so several apps in one process (tests) do not collide. The request series are
// counted in plain numbers and written out at scrape time: a labelled prom-client metric hashes its
// labels on every observation, which cost more than the rest of a cached route's bookkeeping.
// With a token configured (METRICS_TOKEN), a scrape must carry it as `Authorization: Bearer`.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { UnauthorizedError } from '../http/errors.js';
import type { OneLineRequestLog } from '../http/request-log.js';
import { routeConfig } from '../http/route-config.js';

/** Upper bounds of the duration histogram, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

interface RouteSeries {
  method: string;
  route: string;
  /** Requests by status code. */
  statuses: Map<number, number>;
  /** Observations at or below each bound (cumulative when written). */
  buckets: number[];
  count: number;
  sum: number;
}

export interface MetricsOptions {
  /** Bearer token a scrape must send; unset: /metrics is open. */
  token?: string;
  /**
   * The app's request log (request-log.ts), when it is ours: each answer is counted in the same step as
   * its request line, instead of by an onResponse hook of its own.
   */
  answers?: Pick<OneLineRequestLog, 'afterEachAnswer'>;
}

export function registerMetrics(app: FastifyInstance, options: MetricsOptions = {}): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const series = new Map<string, RouteSeries>();

  // A route's series by its config object (the same on every request of the route): no key to build per
  // request. Requests of no route, and of a route taking several methods, go by key.
  const byRoute = new WeakMap<object, RouteSeries>();
  const seriesOf = (method: string, route: string): RouteSeries => {
    const key = `${method} ${route}`;
    let found = series.get(key);
    if (!found) {
      found = { method, route, statuses: new Map(), buckets: DURATION_BUCKETS.map(() => 0), count: 0, sum: 0 };
      series.set(key, found);
    }
    return found;
  };

  const record = (request: FastifyRequest, reply: FastifyReply): void => {
    const config = routeConfig(request);
    const url = config?.url;
    const single = url !== undefined && config?.method === request.method;
    let found = single ? byRoute.get(config!) : undefined;
    if (!found) {
      found = seriesOf(request.method, url ?? 'unmatched');
      if (single) byRoute.set(config!, found);
    }
    found.statuses.set(reply.statusCode, (found.statuses.get(reply.statusCode) ?? 0) + 1);
    const seconds = reply.elapsedTime / 1000;
    for (let bucket = 0; bucket < DURATION_BUCKETS.length; bucket++) {
      if (seconds <= DURATION_BUCKETS[bucket]!) {
        found.buckets[bucket] += 1;
        break;
      }
    }
    found.count += 1;
    found.sum += seconds;
  };
  if (options.answers) options.answers.afterEachAnswer(record);
  else {
    app.addHook('onResponse', (request, reply, done) => {
      record(request, reply);
      done();
    });
  }

  const allowed = options.token === undefined ? () => true : bearerCheck(options.token);
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    if (!allowed(request)) throw new UnauthorizedError('A valid metrics token is required', 'METRICS_TOKEN_REQUIRED');
    reply.type(registry.contentType);
    return (await registry.metrics()) + requestMetricsText([...series.values()]);
  });
  return registry;
}

/** Compares the bearer token in constant time: both sides are hashed to the same length first. */
function bearerCheck(token: string): (request: FastifyRequest) => boolean {
  const expected = createHash('sha256').update(token).digest();
  return (request) => {
    const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
    if (!match) return false;
    return timingSafeEqual(createHash('sha256').update(match[1].trim()).digest(), expected);
  };
}

const label = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** The request series in the Prometheus text format. */
function requestMetricsText(all: RouteSeries[]): string {
  const lines = [
    '# HELP http_requests_total HTTP requests by method, route and status',
    '# TYPE http_requests_total counter',
  ];
  for (const s of all) {
    for (const [status, count] of s.statuses) {
      lines.push(`http_requests_total{method="${label(s.method)}",route="${label(s.route)}",status="${status}"} ${count}`);
    }
  }
  lines.push('# HELP http_request_duration_seconds HTTP request duration by method and route', '# TYPE http_request_duration_seconds histogram');
  for (const s of all) {
    const labels = `method="${label(s.method)}",route="${label(s.route)}"`;
    let cumulative = 0;
    DURATION_BUCKETS.forEach((bound, i) => {
      cumulative += s.buckets[i];
      lines.push(`http_request_duration_seconds_bucket{le="${bound}",${labels}} ${cumulative}`);
    });
    lines.push(`http_request_duration_seconds_bucket{le="+Inf",${labels}} ${s.count}`);
    lines.push(`http_request_duration_seconds_sum{${labels}} ${s.sum}`);
    lines.push(`http_request_duration_seconds_count{${labels}} ${s.count}`);
  }
  return `${lines.join('\n')}\n`;
}
