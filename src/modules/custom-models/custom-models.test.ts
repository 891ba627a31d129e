// Custom AI models: admin CRUD scoped to the twins where the caller holds models.edit, the sealed API
// key never shown, deployment-wide models for super admins, the user list of the current twin, and
// the engine's lookup (findModelForTurn).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findCustomModelById } from './custom-models.repo.js';
import { findModelForTurn } from './model-lookup.js';

let t: TestApp;
let t1: TwinRow;
let t2: TwinRow;
const tok = {} as Record<'admin1' | 'admin2' | 'member' | 'granted' | 'super', string>;

const as = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-access-token': token }, payload });
const create = (token: string, payload: object) => as(token, 'POST', '/api/admin/ai-model', payload);
let n = 0;
const model = (extra: object = {}) => ({ name: `Model ${++n}`, model: `gpt-test-${n}`, ...extra });

beforeAll(async () => {
  t = await startTestApp();
  const db = t.platform.database.db;
  t1 = await buildTwin(db);
  t2 = await buildTwin(db);
  const sign = async (options: Parameters<typeof buildUser>[1]) => signIn(t.app, (await buildUser(db, options)).user.email);
  tok.admin1 = await sign({ twin: t1, role: 'admin' });
  tok.admin2 = await sign({ twin: t2, role: 'admin' });
  tok.member = await sign({ twin: t1 });
  tok.granted = await sign({ twin: t1, grants: ['models.edit'] });
  tok.super = await sign({ twin: t2, accountType: 'super' });
});
afterAll(() => t.close());

describe('admin CRUD', () => {
  it('creates in the current twin with the key sealed and never shown', async () => {
    const response = await create(tok.admin1, model({ apiKey: 'sk-very-secret', baseUrl: 'https://models.example/v1', inputPricePer1k: 0.5, outputPricePer1k: 1.5, minReasoningEffort: 'low', maxTokens: 2048 }));
    expect(response.statusCode).toBe(201);
    const { data } = response.json();
    expect(data).toMatchObject({ institution: t1.id, apiKeySet: true, provider: 'openai', status: 'active', maxTokens: 2048, inputPricePer1k: 0.5, minReasoningEffort: 'low' });
    expect(response.body).not.toContain('sk-very-secret');
    expect(data).not.toHaveProperty('apiKey');
    const row = (await findCustomModelById(t.platform.database.db, data._id))!;
    expect(row.apiKeySealed).toMatch(/^v1\./);
    expect(row.apiKeySealed).not.toContain('sk-very-secret');
    expect((await as(tok.admin1, 'GET', `/api/admin/ai-model/${data._id}`)).body).not.toContain('sk-very-secret');
  });

  it('keeps the key when saved empty or missing, replaces it when given, removes it on clearApiKey', async () => {
    const { data } = (await create(tok.admin1, model({ apiKey: 'first-key' }))).json();
    const lookup = async () => (await findModelForTurn(t.platform.database.db, t.platform.secrets, t1.id, data.name))?.apiKey;
    expect((await as(tok.admin1, 'PUT', `/api/admin/ai-model/${data._id}`, { apiKey: '', description: 'edited' })).json().data).toMatchObject({ apiKeySet: true, description: 'edited' });
    expect(await lookup()).toBe('first-key');
    await as(tok.admin1, 'PUT', `/api/admin/ai-model/${data._id}`, { status: 'active' });
    expect(await lookup()).toBe('first-key');
    await as(tok.admin1, 'PUT', `/api/admin/ai-model/${data._id}`, { apiKey: 'second-key' });
    expect(await lookup()).toBe('second-key');
    const cleared = await as(tok.admin1, 'PUT', `/api/admin/ai-model/${data._id}`, { clearApiKey: true });
    expect(cleared.json().data.apiKeySet).toBe(false);
    expect(await lookup()).toBeNull();
  });

  it('needs models.edit: a plain member gets 403, a member with the grant may act', async () => {
    expect((await create(tok.member, model())).statusCode).toBe(403);
    expect((await as(tok.member, 'GET', '/api/admin/ai-models')).statusCode).toBe(403);
    expect((await create(tok.granted, model())).statusCode).toBe(201);
  });

  it("answers 404 for another twin's model and leaves it alone", async () => {
    const { data } = (await create(tok.admin1, model())).json();
    expect((await as(tok.admin2, 'GET', `/api/admin/ai-model/${data._id}`)).statusCode).toBe(404);
    const edit = await as(tok.admin2, 'PUT', `/api/admin/ai-model/${data._id}`, { name: 'hijacked' });
    expect(edit.statusCode).toBe(404);
    expect(edit.json().message).toBe('AI model not found');
    expect((await as(tok.admin2, 'DELETE', `/api/admin/ai-model/${data._id}`)).statusCode).toBe(404);
    expect((await create(tok.admin2, model({ institution: t1.id }))).statusCode).toBe(403);
    const list = (await as(tok.admin2, 'GET', '/api/admin/ai-models?limit=100')).json();
    expect(list.data.map((m: { _id: string }) => m._id)).not.toContain(data._id);
    expect((await findCustomModelById(t.platform.database.db, data._id))!.name).toBe(data.name);
  });

  it('refuses a duplicate name in one twin (409) but not across twins', async () => {
    expect((await create(tok.admin1, { name: 'Shared Name', model: 'a' })).statusCode).toBe(201);
    const again = await create(tok.admin1, { name: 'shared name', model: 'b' });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('MODEL_NAME_TAKEN');
    expect((await create(tok.admin2, { name: 'Shared Name', model: 'c' })).statusCode).toBe(201);
  });

  it('refuses bad values with 400', async () => {
    for (const payload of [{ name: 'x' }, model({ baseUrl: 'ftp://files.example' }), model({ maxTokens: 0 }), model({ provider: 'mystery' }), model({ inputPricePer1k: -1 })]) {
      expect((await create(tok.admin1, payload)).statusCode).toBe(400);
    }
  });

  it('lets only super admins write deployment-wide models; admins may read them', async () => {
    expect((await create(tok.admin1, model({ institution: null }))).statusCode).toBe(403);
    const created = await create(tok.super, model({ institution: null }));
    expect(created.statusCode).toBe(201);
    const { data } = created.json();
    expect(data.institution).toBeNull();
    expect((await as(tok.admin1, 'GET', `/api/admin/ai-model/${data._id}`)).statusCode).toBe(200);
    expect((await as(tok.admin1, 'PUT', `/api/admin/ai-model/${data._id}`, { description: 'x' })).statusCode).toBe(403);
    expect((await as(tok.super, 'PUT', `/api/admin/ai-model/${data._id}`, { description: 'x' })).statusCode).toBe(200);
  });

  it('lists paginated with a total', async () => {
    const page = (await as(tok.admin1, 'GET', '/api/admin/ai-models?page=1&limit=2')).json();
    expect(page).toMatchObject({ success: true, page: 1, limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.total).toBeGreaterThan(2);
  });

  it("bulk-deletes only the caller's twins' models and reports how many changed", async () => {
    const own = [(await create(tok.admin1, model())).json().data._id, (await create(tok.admin1, model())).json().data._id];
    const foreign = (await create(tok.admin2, model())).json().data._id;
    const response = await as(tok.admin1, 'POST', '/api/admin/ai-models/bulk-delete', { ids: [...own, foreign] });
    expect(response.json()).toEqual({ success: true, changed: 2 });
    expect(await findCustomModelById(t.platform.database.db, own[0])).toBeUndefined();
    expect(await findCustomModelById(t.platform.database.db, foreign)).toBeDefined();
    expect((await as(tok.admin1, 'POST', '/api/admin/ai-models/bulk-delete', { ids: ['bad'] })).statusCode).toBe(400);
  });

  it('deletes one', async () => {
    const { data } = (await create(tok.admin1, model())).json();
    expect((await as(tok.admin1, 'DELETE', `/api/admin/ai-model/${data._id}`)).json()).toEqual({ success: true, message: 'AI model deleted' });
    expect((await as(tok.admin1, 'GET', `/api/admin/ai-model/${data._id}`)).statusCode).toBe(404);
  });
});

describe('POST /api/user/customModels and findModelForTurn', () => {
  it("lists the current twin's active models and deployment-wide ones with the spec's fields", async () => {
    const mine = (await create(tok.admin1, model({ name: 'Only T1', description: 'd', contextWindow: 32000 }))).json().data;
    await create(tok.admin1, model({ name: 'Dormant', status: 'inactive' }));
    await create(tok.admin2, model({ name: 'Only T2' }));
    await create(tok.super, { name: 'Everywhere', model: 'global-model', institution: null });
    await create(tok.super, { name: 'Overridden', model: 'global-version', institution: null });
    await create(tok.admin1, { name: 'Overridden', model: 'twin-version' });
    const response = await as(tok.member, 'POST', '/api/user/customModels');
    expect(response.statusCode).toBe(200);
    const data: Record<string, unknown>[] = response.json().data;
    const names = data.map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(['Only T1', 'Everywhere', 'Overridden']));
    expect(names).not.toContain('Dormant');
    expect(names).not.toContain('Only T2');
    expect(data.filter((m) => m.name === 'Overridden')).toEqual([expect.objectContaining({ model: 'twin-version' })]);
    expect(data.find((m) => m._id === mine._id)).toEqual({
      _id: mine._id, name: 'Only T1', model: mine.model, description: 'd', provider: 'openai', status: 'active', maxTokens: 4096, contextWindow: 32000,
    });
  });

  it('finds the model of a turn by name or model id, the twin first, never another twin or an inactive one', async () => {
    const db = t.platform.database.db;
    await create(tok.admin1, { name: 'Turn Model', model: 'provider-id-1', apiKey: 'k1', minReasoningEffort: 'medium', inputPricePer1k: 0.25, outputPricePer1k: 2, baseUrl: 'https://models.example.test/v1' });
    await create(tok.admin2, { name: 'Other Twin Model', model: 'provider-id-2' });
    await create(tok.admin1, { name: 'Asleep', model: 'provider-id-3', status: 'inactive' });
    expect(await findModelForTurn(db, t.platform.secrets, t1.id, 'turn model')).toMatchObject({
      model: 'provider-id-1', apiKey: 'k1', minReasoningEffort: 'medium', inputPricePer1k: 0.25, outputPricePer1k: 2, baseUrl: 'https://models.example.test/v1',
    });
    expect((await findModelForTurn(db, t.platform.secrets, t1.id, 'provider-id-1'))?.name).toBe('Turn Model');
    expect(await findModelForTurn(db, t.platform.secrets, t1.id, 'Other Twin Model')).toBeNull();
    expect(await findModelForTurn(db, t.platform.secrets, t1.id, 'Asleep')).toBeNull();
    expect((await findModelForTurn(db, t.platform.secrets, t1.id, 'Overridden'))?.model).toBe('twin-version');
    expect((await findModelForTurn(db, t.platform.secrets, t2.id, 'Overridden'))?.model).toBe('global-version');
  });
});
