// The web client's serving: hashed assets cached for a year, the page (with its CSP) for client routes,
// missing assets and every /api, /socket.io and /metrics path left to the JSON 404.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandler } from './error-handler.js';
import { registerResponseHeaders, securityHeaders } from './security-headers.js';
import { registerWebClient, WEB_CLIENT_CSP } from './web-client.js';

let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dt-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg/>');
  writeFileSync(path.join(path.dirname(dir), 'secret-outside.txt'), 'no');
  app = Fastify();
  registerResponseHeaders(app);
  registerErrorHandler(app);
  app.get('/api/test', async () => ({ success: true }));
  expect(registerWebClient(app, dir)).toBe(true);
  await app.ready();
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(path.join(path.dirname(dir), 'secret-outside.txt'), { force: true });
});

describe('the web client at /', () => {
  it('serves a hashed asset with a year-long immutable cache and its type', async () => {
    const response = await app.inject('/assets/index-AbC123.js');
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.body).toBe('console.log(1)');
  });

  it('answers every client route with the page, not cached, under its content security policy', async () => {
    for (const url of ['/', '/c/0123456789abcdef01234567', '/settings', '/reset-password?token=abc', '/admin/users']) {
      const response = await app.inject(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toBe(WEB_CLIENT_CSP);
      // A document: helmet's document-only headers too (JSON answers go without them).
      for (const [name, value] of Object.entries(securityHeaders())) expect(response.headers[name]).toBe(value);
      expect(response.body).toContain('<div id="root">');
    }
  });

  it('serves other files of the bundle revalidated each time', async () => {
    const response = await app.inject('/favicon.svg');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('image/svg+xml');
    expect(response.headers['cache-control']).toBe('no-cache');
  });

  it('leaves the API, Socket.IO and metrics paths to the JSON 404, and a missing asset is a 404', async () => {
    expect((await app.inject('/api/test')).json()).toEqual({ success: true });
    for (const url of ['/api/nope', '/api', '/socket.io/x', '/metrics', '/assets/index-old.js', '/robots.txt']) {
      const response = await app.inject(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toMatchObject({ success: false, code: 'ROUTE_NOT_FOUND' });
    }
  });

  it('never reads outside the bundle', async () => {
    for (const url of ['/../secret-outside.txt', '/%2e%2e/secret-outside.txt', '/assets/..%2f..%2fsecret-outside.txt', '/%E0%A4%A']) {
      const response = await app.inject(url);
      expect(response.body, url).not.toBe('no');
    }
  });

  it('registers nothing when the client is not built', async () => {
    const bare = Fastify({ logger: false });
    expect(registerWebClient(bare, path.join(dir, 'missing'))).toBe(false);
    await bare.close();
  });
});
