// /metrics behind METRICS_TOKEN, as a scraper sees it: without the bearer token, or with a wrong one,
// a 401 in the failure shape; with it, the Prometheus text. (Unset, /metrics is open: health.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { loadConfig } from '../../config.js';

const TOKEN = 'scrape-token-0123456789';
let t: TestApp;

beforeAll(async () => {
  // A logger, as every deployment has (at any level): the answers are then counted in the request log's
  // step (request-log.ts), not by a hook of the metrics' own (the tests' apps without a logger).
  t = await startTestApp({ env: { METRICS_TOKEN: TOKEN }, logger: { level: 'silent' } });
});
afterAll(() => t.close());

const scrape = (authorization?: string) =>
  t.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

describe('METRICS_TOKEN', () => {
  it('answers 401 without the token, with a wrong one, or with it outside a Bearer header', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const response = await scrape(authorization);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ success: false, message: 'A valid metrics token is required', code: 'METRICS_TOKEN_REQUIRED' });
    }
  });

  it('serves the metrics with the token', async () => {
    const response = await scrape(`Bearer ${TOKEN}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toContain('http_requests_total');
  });

  it('counts requests by method, route and status, and requests of no route as unmatched', async () => {
    const count = async (series: string) => {
      const line = (await scrape(`Bearer ${TOKEN}`)).body.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.split(' ')[1]) : 0;
    };
    const health = 'http_requests_total{method="GET",route="/api/test",status="200"}';
    const healthHead = 'http_requests_total{method="HEAD",route="/api/test",status="200"}';
    const unmatchedGet = 'http_requests_total{method="GET",route="unmatched",status="404"}';
    const unmatchedPost = 'http_requests_total{method="POST",route="unmatched",status="404"}';
    const before = await Promise.all([health, healthHead, unmatchedGet, unmatchedPost].map(count));
    for (let i = 0; i < 3; i++) expect((await t.app.inject({ method: 'GET', url: '/api/test' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'HEAD', url: '/api/test' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/no-such-route' })).statusCode).toBe(404);
    for (let i = 0; i < 2; i++) expect((await t.app.inject({ method: 'POST', url: '/api/no-such-route' })).statusCode).toBe(404);
    const after = await Promise.all([health, healthHead, unmatchedGet, unmatchedPost].map(count));
    expect(after.map((n, i) => n - before[i]!)).toEqual([3, 1, 1, 2]);
  });

  it('is validated at start: a short token stops the process with a reason naming the variable', () => {
    expect(() => loadConfig({ DATA_DIR: t.dataDir, JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: 'a'.repeat(64), METRICS_TOKEN: 'short' })).toThrow(
      'Invalid configuration: METRICS_TOKEN must be at least 16 characters',
    );
  });
});
