// Text PostgreSQL cannot store and shapes no route takes, refused at the edge through the real routes:
// a NUL or a lone surrogate in any body, query or path string (or key) is a 400 INVALID_TEXT naming
// the field, nesting past 32 levels a 400 TOO_DEEP; nothing reaches the database. URLs the router
// cannot decode answer in the failure shape too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let token: string;
let superToken: string;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  const db = t.platform.database.db;
  token = await signIn(t.app, (await buildUser(db)).user.email);
  superToken = await signIn(t.app, (await buildUser(db, { accountType: 'super' })).user.email);
});
afterAll(() => t.close());

const invalidText = (field: string) => ({
  success: false,
  code: 'INVALID_TEXT',
  message: `Invalid ${field}: must not contain NUL characters or unpaired surrogates`,
  error: { field },
});

describe('NUL characters and lone surrogates', () => {
  it('refuses a NUL in a body field with a 400 naming the field, and stores nothing', async () => {
    const response = await req(token, 'POST', '/api/user/memory', { key_name: 'a\u0000b', key_value: 'x' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(invalidText('body.key_name'));
    expect((await req(token, 'GET', '/api/user/memory')).body.data).toEqual([]);
  });

  it('refuses lone surrogates (high or low) and accepts a proper pair', async () => {
    expect((await req(token, 'POST', '/api/user/memory', { key_name: 'x', key_value: 'a\ud800' })).body).toEqual(invalidText('body.key_value'));
    expect((await req(token, 'POST', '/api/user/memory', { key_name: 'x', key_value: '\udc00b' })).body).toEqual(invalidText('body.key_value'));
    const paired = await req(token, 'POST', '/api/user/memory', { key_name: 'emoji', key_value: 'a\ud83d\ude00' });
    expect(paired.status).toBe(201);
    expect(paired.body.data.key_value).toBe('a😀');
  });

  it('names nested fields, array items and keys', async () => {
    const nested = await req(superToken, 'POST', '/api/admin/users/import', { users: [{ email: 'a@example.test' }, { email: 'b\u0000@example.test' }] });
    expect(nested.status).toBe(400);
    expect(nested.body).toEqual(invalidText('body.users.1.email'));
    const key = await req(token, 'PUT', '/api/user/setting', { ['bad\u0000key']: true });
    expect(key.body).toEqual(invalidText('body.bad\u0000key'));
  });

  it('refuses a NUL in a query parameter and in a path parameter', async () => {
    const query = await req(superToken, 'GET', '/api/admin/users?search=%00');
    expect(query.status).toBe(400);
    expect(query.body).toEqual(invalidText('query.search'));
    const params = await req(token, 'DELETE', '/api/user/memory/%00');
    expect(params.status).toBe(400);
    expect(params.body).toEqual(invalidText('params.id'));
  });

  it('uses the message the spec fixes for a route, and still names the field', async () => {
    const response = await req(token, 'POST', '/api/user/assistant', { name: 'Lab\u0000helper' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, code: 'INVALID_TEXT', message: 'Invalid Properties', error: { field: 'body.name' } });
  });
});

describe('URLs the router cannot read', () => {
  it('answers a malformed percent-encoding with 400 INVALID_URL and an overlong path parameter with 414, in the failure shape', async () => {
    for (const url of ['/api/user/memory/%ZZ', '/api/user/memory/%ED%A0%80']) {
      const response = await t.app.inject({ method: 'DELETE', url, headers: { 'x-access-token': token } });
      expect(response.statusCode, url).toBe(400);
      expect(response.json()).toEqual({ success: false, message: 'The URL is not valid (malformed percent-encoding)', code: 'INVALID_URL' });
    }
    const long = await req(token, 'DELETE', `/api/user/memory/${'a'.repeat(5_000)}`);
    expect(long.status).toBe(414);
    expect(long.body).toEqual({ success: false, message: 'A path parameter is too long', code: 'PARAM_TOO_LONG' });
  });
});

describe('nesting', () => {
  it('refuses bodies nested deeper than 32 levels', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i += 1) deep = { a: deep };
    const response = await req(token, 'PUT', '/api/user/setting', { theme: deep });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'TOO_DEEP', error: { field: expect.stringMatching(/^body\.theme(\.a)+$/) } });
    expect(response.body.message).toMatch(/^Invalid body\.theme.*: nested deeper than 32 levels$/);
  });

  it('still refuses update operators at any depth', async () => {
    const response = await req(token, 'PUT', '/api/user/setting', { theme: { nested: { $set: 1 } } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 'FORBIDDEN_KEY', error: { field: '$set' } });
  });
});
