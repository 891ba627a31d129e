// The route schemas' validation with its shortcut for empty parts (validator.ts): what a client gets is
// what zod alone gives, whether the schema accepts `{}` as it is, fills defaults into it, or refuses it.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerErrorHandler } from './error-handler.js';
import { validatorCompiler } from './validator.js';

const app = Fastify({ logger: false });

beforeAll(async () => {
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandler(app);
  const echo = async (request: { body?: unknown; query?: unknown }) => ({ body: request.body ?? null, query: request.query });
  app.post('/optional', { schema: { body: z.object({ slug: z.string().optional() }).nullish() } }, echo);
  app.post('/required', { schema: { body: z.object({ name: z.string() }) } }, echo);
  app.post('/defaults', { schema: { body: z.object({ size: z.number().default(3) }) } }, echo);
  app.get('/listing', { schema: { querystring: z.object({ limit: z.coerce.number().default(10) }) } }, echo);
  app.get('/plain', { schema: { querystring: z.object({ q: z.string().optional() }) } }, echo);
  await app.ready();
});
afterAll(() => app.close());

const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, payload: payload as object });

describe('empty parts', () => {
  it('accepts {} where every field is optional, and each request gets its own object', async () => {
    const first = await post('/optional', {});
    expect(first.statusCode).toBe(200);
    expect(first.json().body).toEqual({});
    expect((await post('/optional', { slug: 'a', other: 1 })).json().body).toEqual({ slug: 'a' });
  });

  it('still refuses a wrong field next to the shortcut', async () => {
    const response = await post('/optional', { slug: 5 });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'VALIDATION_FAILED' });
  });

  it('refuses {} when a field is required, as zod does', async () => {
    const response = await post('/required', {});
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'VALIDATION_FAILED' });
  });

  it('fills defaults into {} and into an empty query', async () => {
    expect((await post('/defaults', {})).json().body).toEqual({ size: 3 });
    expect((await app.inject({ method: 'GET', url: '/listing' })).json().query).toEqual({ limit: 10 });
  });

  it('passes an empty query through as an empty object', async () => {
    const response = await app.inject({ method: 'GET', url: '/plain' });
    expect(response.statusCode).toBe(200);
    expect(response.json().query).toEqual({});
    expect((await app.inject({ method: 'GET', url: '/plain?q=x' })).json().query).toEqual({ q: 'x' });
  });
});
