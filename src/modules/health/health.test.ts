// Health, the API reference and metrics, as an operator reaches them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /api/test', () => {
  it('reports ok, the version and the database kind without a token', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/test' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      success: true,
      status: 'ok',
      version: '2.0.262',
      database: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite',
      redis: Boolean(process.env.TEST_REDIS_URL),
    });
  });

  it('answers 503 degraded when the database does not answer', async () => {
    const other = await startTestApp();
    await other.platform.database.close();
    const response = await other.app.inject({ method: 'GET', url: '/api/test' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ success: false, status: 'degraded' });
    await other.close().catch(() => {});
  });
});

describe('API reference', () => {
  it('serves a readable page at /api/docs and the OpenAPI JSON at /api/docs/json', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/api/docs' });
    const html = page.statusCode === 302 ? await t.app.inject({ method: 'GET', url: page.headers.location as string }) : page;
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toContain('text/html');
    const json = await t.app.inject({ method: 'GET', url: '/api/docs/json' });
    expect(json.statusCode).toBe(200);
    const document = json.json();
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info.version).toBe('2.0.262');
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/api/auth/signin', '/api/user/refresh/profile', '/api/test']));
    expect(document.paths['/api/auth/signin'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('email');
  });
});

describe('GET /metrics', () => {
  it('exposes Prometheus metrics including request counts', async () => {
    await t.app.inject({ method: 'GET', url: '/api/test' });
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('http_requests_total{method="GET",route="/api/test",status="200"}');
    expect(response.body).toContain('process_cpu_seconds_total');
  });

  it('counts each request once, with a duration histogram whose buckets add up', async () => {
    const scrape = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = (body: string, line: string) => Number(body.split('\n').find((l) => l.startsWith(`${line} `))?.slice(line.length + 1) ?? 0);
    const total = 'http_requests_total{method="GET",route="/api/test",status="200"}';
    const before = value(await scrape(), total);
    for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/api/test' });
    const body = await scrape();
    expect(value(body, total)).toBe(before + 3);
    const labels = 'method="GET",route="/api/test"';
    const count = value(body, `http_request_duration_seconds_count{${labels}}`);
    expect(count).toBe(before + 3);
    expect(value(body, `http_request_duration_seconds_bucket{le="+Inf",${labels}}`)).toBe(count);
    expect(value(body, `http_request_duration_seconds_bucket{le="10",${labels}}`)).toBeLessThanOrEqual(count);
    expect(value(body, `http_request_duration_seconds_sum{${labels}}`)).toBeGreaterThan(0);
    expect(body).toContain('# TYPE http_request_duration_seconds histogram');
  });
});
