// The HTTP platform as a client sees it: failure shapes, schema errors naming the field, 404 JSON,
// a plain 500, refused operator and prototype keys, malformed ids, size limit, headers, CORS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idParams } from './schemas.js';
import { DOCUMENT_ONLY_HEADERS, securityHeaders } from './security-headers.js';
import { coalesceWrites } from './coalesced-writes.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';

let t: TestApp;
const received: unknown[] = [];

beforeAll(async () => {
  t = await startTestApp({
    env: { BODY_LIMIT: '2048' },
    beforeReady: (app) => {
      app.post(
        '/api/test-only/echo/:id',
        {
          config: { auth: 'none' },
          schema: { params: idParams, body: z.object({ name: z.string().min(2), nested: z.object({ size: z.number() }).optional() }) },
        },
        async (request) => {
          received.push(request.body);
          return { success: true, body: request.body };
        },
      );
      app.get('/api/test-only/boom', { config: { auth: 'none' } }, async () => {
        throw new Error('database exploded: secret detail');
      });
    },
  });
});
afterAll(() => t.close());

const echo = (payload: unknown, id = 'aaaaaaaaaaaaaaaaaaaaaaaa') =>
  t.app.inject({ method: 'POST', url: `/api/test-only/echo/${id}`, payload: payload as object });

describe('connections', () => {
  it("coalesce their writes once a loop turn (coalesced-writes.ts)", () => {
    expect(t.app.server.listeners('connection')).toContain(coalesceWrites);
  });
});

describe('failure bodies', () => {
  it('names the failing field of a schema error with a 400', async () => {
    const response = await echo({ name: 'x' });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({ success: false, code: 'VALIDATION_FAILED', error: { field: 'body.name' } });
    expect(body.message).toContain('body.name');
  });

  it('names a nested field', async () => {
    const response = await echo({ name: 'ok', nested: { size: 'big' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.field).toBe('body.nested.size');
  });

  it('drops unknown keys instead of applying them', async () => {
    const response = await echo({ name: 'ok', admin: true });
    expect(response.statusCode).toBe(200);
    expect(response.json().body).toEqual({ name: 'ok' });
  });

  it('refuses update operators at any depth with 400', async () => {
    for (const payload of [{ name: 'ok', $set: { admin: true } }, { name: 'ok', nested: { $gt: 1 } }]) {
      const response = await echo(payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false, code: 'FORBIDDEN_KEY' });
    }
  });

  it('refuses __proto__ and constructor keys with 400', async () => {
    const proto = await t.app.inject({
      method: 'POST',
      url: '/api/test-only/echo/aaaaaaaaaaaaaaaaaaaaaaaa',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"ok","__proto__":{"admin":true}}',
    });
    expect(proto.statusCode).toBe(400);
    expect(proto.json().success).toBe(false);
    const ctor = await echo({ name: 'ok', constructor: { name: 'x' } });
    expect(ctor.statusCode).toBe(400);
    expect(ctor.json().success).toBe(false);
  });

  it('answers a malformed 24-hex id in a path with 400, never 500', async () => {
    for (const id of ['123', 'zzzzzzzzzzzzzzzzzzzzzzzz', 'AAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const response = await echo({ name: 'ok' }, id);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.field).toBe('params.id');
    }
  });

  it('answers unknown routes with a JSON 404', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/nothing/here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ success: false, code: 'ROUTE_NOT_FOUND' });
  });

  it('hides the cause of a 500 behind "Something went wrong"', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/test-only/boom' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ success: false, message: 'Something went wrong' });
    expect(response.body).not.toContain('secret detail');
  });

  it('refuses malformed JSON with 400, an oversized body with 413 and an unknown content type with 415, in our own codes', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/test-only/echo/aaaaaaaaaaaaaaaaaaaaaaaa',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ success: false, code: 'INVALID_JSON' });
    const big = await echo({ name: 'x'.repeat(4096) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ success: false, message: 'Request body is too large', code: 'BODY_TOO_LARGE' });
    const text = await t.app.inject({ method: 'POST', url: '/api/test-only/echo/aaaaaaaaaaaaaaaaaaaaaaaa', headers: { 'content-type': 'text/csv' }, payload: 'a,b' });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toEqual({ success: false, message: 'Unsupported content type', code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('leaves nothing half-applied: a refused request never reaches the handler', async () => {
    const before = received.length;
    await echo({ name: 'ok', $where: '1' });
    await echo({ name: 'x' });
    expect(received.length).toBe(before);
  });
});

describe('headers', () => {
  it('sends helmet headers and a request id', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/test' });
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBeDefined();
    expect(response.headers['strict-transport-security']).toBeDefined();
    expect(response.headers['cross-origin-resource-policy']).toBe('cross-origin');
  });

  it('keeps the headers that act only on documents off JSON answers and puts them on the API reference', async () => {
    const json = await t.app.inject({ method: 'GET', url: '/api/test' });
    for (const name of DOCUMENT_ONLY_HEADERS) expect(json.headers[name]).toBeUndefined();
    const page = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    for (const [name, value] of Object.entries(securityHeaders())) expect(page.headers[name]).toBe(value);
  });

  it('answers CORS preflight requests', async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/signin',
      headers: { origin: 'https://school.example', 'access-control-request-method': 'POST' },
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('https://school.example');
    expect(response.headers['access-control-allow-credentials']).toBe('true');
    expect(response.headers['content-length']).toBe('0');
    expect(response.body).toBe('');
  });

  it('allows every method the API uses and the headers a preflight asks for', async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/user/memory/some-id',
      headers: { origin: 'https://school.example', 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'x-access-token, content-type' },
    });
    expect(response.statusCode).toBe(204);
    expect(String(response.headers['access-control-allow-methods']).split(',')).toEqual(['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE']);
    expect(response.headers['access-control-allow-headers']).toBe('x-access-token, content-type');
    expect(response.headers.vary).toBe('Origin, Access-Control-Request-Headers');
  });

  it('refuses a malformed preflight in the failure shape', async () => {
    for (const headers of [{}, { origin: 'https://school.example' }, { 'access-control-request-method': 'POST' }]) {
      const response = await t.app.inject({ method: 'OPTIONS', url: '/api/auth/signin', headers });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ success: false, code: 'INVALID_PREFLIGHT' });
    }
  });

  it('lets any origin read an answer with credentials and the request id, and says the answer varies by origin', async () => {
    const from = await t.app.inject({ method: 'GET', url: '/api/test', headers: { origin: 'https://embed.example' } });
    expect(from.headers['access-control-allow-origin']).toBe('https://embed.example');
    expect(from.headers['access-control-allow-credentials']).toBe('true');
    expect(from.headers['access-control-expose-headers']).toBe('x-request-id');
    expect(from.headers.vary).toBe('Origin');
    // Without an Origin the request is not read under CORS: only Vary says the answer depends on it.
    const noOrigin = await t.app.inject({ method: 'GET', url: '/api/test' });
    expect(noOrigin.headers.vary).toBe('Origin');
    for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers']) {
      expect(noOrigin.headers[name]).toBeUndefined();
    }
  });

  it('sets the headers on answers of no route too', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/no-such-route', headers: { origin: 'https://embed.example' } });
    expect(response.statusCode).toBe(404);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['access-control-allow-origin']).toBe('https://embed.example');
  });
});
