// Twin administration through the real routes: create, list, read, edit settings (behaviour 6),
// bulk status and delete (behaviour 13), and the cross-tenant cases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { findTwinById } from './twins.repo.js';
import type { TwinRow } from './twins.tables.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
let tokenA: string;
let tokenSuper: string;
let tokenMember: string;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db(), { name: 'Alpha Twin' });
  twinB = await buildTwin(db(), { name: 'Beta Twin' });
  const admin = await buildUser(db(), { twin: twinA, role: 'admin' });
  const sup = await buildUser(db(), { twin: twinB, accountType: 'super' });
  const member = await buildUser(db(), { twin: twinA });
  tokenA = await signIn(t.app, admin.user.email);
  tokenSuper = await signIn(t.app, sup.user.email);
  tokenMember = await signIn(t.app, member.user.email);
});
afterAll(() => t.close());

describe('POST /api/admin/institution', () => {
  it('lets a super admin create a twin with settings defaults as documented', async () => {
    const response = await req(tokenSuper, 'POST', '/api/admin/institution', { name: 'Gamma', ainame: 'Gamma AI', reasoningEffort: 'high' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      name: 'Gamma', ainame: 'Gamma AI', status: 'active', reasoningEffort: 'high',
      guardrailsEnabled: false, guardrailsText: '', longTermMemoryEnabled: false, memoryAdminsOnly: true,
      defaultMemoryMode: 'session', userDailyLimit: null, twinDailyLimit: null, embedGuidanceEnabled: false, liveTranscriptEnabled: false, credits: 0,
    });
    expect(response.body.data._id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('refuses a twin administrator (403) and a body without a name (400)', async () => {
    expect((await req(tokenA, 'POST', '/api/admin/institution', { name: 'Nope' })).status).toBe(403);
    expect((await req(tokenSuper, 'POST', '/api/admin/institution', { ainame: 'x' })).status).toBe(400);
  });
});

describe('GET /api/admin/institutions and /institution/{id}', () => {
  it('shows an admin only their twins and a super all; another twin answers 404', async () => {
    const mine = await req(tokenA, 'GET', '/api/admin/institutions');
    expect(mine.body.data.map((row: { _id: string }) => row._id)).toEqual([twinA.id]);
    expect(mine.body.total).toBe(1);
    const searched = await req(tokenSuper, 'GET', '/api/admin/institutions?search=beta');
    expect(searched.body.data.map((row: { name: string }) => row.name)).toEqual(['Beta Twin']);
    expect((await req(tokenA, 'GET', `/api/admin/institution/${twinA.id}`)).body.data.name).toBe('Alpha Twin');
    expect((await req(tokenA, 'GET', `/api/admin/institution/${twinB.id}`)).status).toBe(404);
    expect((await req(tokenMember, 'GET', `/api/admin/institution/${twinA.id}`)).status).toBe(404);
    expect((await req(tokenMember, 'GET', '/api/admin/institutions')).body.total).toBe(0);
  });
});

describe('PUT /api/admin/institution/{id}', () => {
  it('saves guardrails, caps, voice, embedding and branding settings', async () => {
    const response = await req(tokenA, 'PUT', `/api/admin/institution/${twinA.id}`, {
      guardrailsEnabled: true, guardrailsText: 'Never give medical advice.', userDailyLimit: 50, twinDailyLimit: 1000,
      rtEnabled: true, voice_agent_id: 'agent-7', about: 'About us', picture_dark_bg: 'https://cdn.example/dark.png',
      publicAuthorizedUrls: ['https://school.example'], embedGuidanceEnabled: true, liveTranscriptEnabled: true, reasoningEffort: 'off',
      publicId: '00000000-0000-4000-8000-000000000000', credits: 1e6,
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, message: 'Institution updated' });
    expect(response.body.data).toMatchObject({
      guardrailsEnabled: true, guardrailsText: 'Never give medical advice.', userDailyLimit: 50, twinDailyLimit: 1000,
      rtEnabled: true, voice_agent_id: 'agent-7', about: 'About us', picture_dark_bg: 'https://cdn.example/dark.png',
      publicAuthorizedUrls: ['https://school.example'], embedGuidanceEnabled: true, liveTranscriptEnabled: true, reasoningEffort: 'off', credits: 0,
    });
    expect(response.body.data.publicId).toBe(twinA.publicId);
    expect((await req(tokenA, 'PUT', `/api/admin/institution/${twinA.id}`, { userDailyLimit: null })).body.data.userDailyLimit).toBeNull();
  });

  it('names the live transcript setting liveTranscriptEnabled on the wire; the former name is not applied', async () => {
    const twin = await buildTwin(db());
    const admin = await buildUser(db(), { twin, role: 'admin' });
    const token = await signIn(t.app, admin.user.email);
    const old = await req(token, 'PUT', `/api/admin/institution/${twin.id}`, { embedTranscriptEnabled: true });
    expect(old.body.data.liveTranscriptEnabled).toBe(false);
    expect(old.body.data).not.toHaveProperty('embedTranscriptEnabled');
    const saved = await req(token, 'PUT', `/api/admin/institution/${twin.id}`, { liveTranscriptEnabled: true });
    expect(saved.body.data.liveTranscriptEnabled).toBe(true);
    expect((await req(token, 'GET', `/api/admin/institution/${twin.id}`)).body.data.liveTranscriptEnabled).toBe(true);
  });

  it('behaviour 6: enabling long-term memory also sets admins-only off and the default mode in the same save', async () => {
    const twin = await buildTwin(db());
    const admin = await buildUser(db(), { twin, role: 'admin' });
    const token = await signIn(t.app, admin.user.email);
    const before = (await req(token, 'GET', `/api/admin/institution/${twin.id}`)).body.data;
    expect(before).toMatchObject({ longTermMemoryEnabled: false, memoryAdminsOnly: true, defaultMemoryMode: 'session' });
    const enabled = await req(token, 'PUT', `/api/admin/institution/${twin.id}`, { longTermMemoryEnabled: true, memoryAdminsOnly: true, defaultMemoryMode: 'off' });
    expect(enabled.body.data).toMatchObject({ longTermMemoryEnabled: true, memoryAdminsOnly: false, defaultMemoryMode: 'long_term' });
    // Once on, the two settings are the administrator's to change.
    const later = await req(token, 'PUT', `/api/admin/institution/${twin.id}`, { longTermMemoryEnabled: true, memoryAdminsOnly: true });
    expect(later.body.data).toMatchObject({ longTermMemoryEnabled: true, memoryAdminsOnly: true, defaultMemoryMode: 'long_term' });
  });

  it('refuses values outside the enums, another twin (404) and super-only fields for admins', async () => {
    expect((await req(tokenA, 'PUT', `/api/admin/institution/${twinA.id}`, { reasoningEffort: 'extreme' })).status).toBe(400);
    expect((await req(tokenA, 'PUT', `/api/admin/institution/${twinA.id}`, { userDailyLimit: -1 })).status).toBe(400);
    expect((await req(tokenA, 'PUT', `/api/admin/institution/${twinB.id}`, { name: 'Taken over' })).status).toBe(404);
    expect((await findTwinById(db(), twinB.id))!.name).toBe('Beta Twin');
    const account = await req(tokenA, 'PUT', `/api/admin/institution/${twinA.id}`, { accountId: 'aaaaaaaaaaaaaaaaaaaaaaaa' });
    expect(account.body).toMatchObject({ ignoredFields: ['accountId'], data: { accountId: null } });
    expect((await req(tokenMember, 'PUT', `/api/admin/institution/${twinA.id}`, { name: 'x' })).status).toBe(404);
  });
});

describe('bulk and delete', () => {
  it('bulk status acts only on the admin\'s twins and reports how many changed', async () => {
    const ids = [twinA.id, twinB.id];
    expect((await req(tokenA, 'POST', '/api/admin/institutions/bulk', { action: 'deactivate', ids })).body).toEqual({ success: true, changed: 1 });
    expect((await findTwinById(db(), twinA.id))!.status).toBe('inactive');
    expect((await findTwinById(db(), twinB.id))!.status).toBe('active');
    expect((await req(tokenA, 'POST', '/api/admin/institutions/bulk', { action: 'deactivate', ids })).body.changed).toBe(0);
    expect((await req(tokenA, 'POST', '/api/admin/institutions/bulk', { action: 'activate', ids })).body.changed).toBe(1);
    expect((await req(tokenA, 'POST', '/api/admin/institutions/bulk', { action: 'delete', ids })).body.changed).toBe(0);
    expect(await findTwinById(db(), twinA.id)).toBeDefined();
  });

  it('lets a super admin delete twins (soft), which then answer 404', async () => {
    const one = await buildTwin(db());
    const two = await buildTwin(db());
    expect((await req(tokenSuper, 'POST', '/api/admin/institutions/bulk', { action: 'delete', ids: [one.id] })).body.changed).toBe(1);
    expect((await req(tokenSuper, 'GET', `/api/admin/institution/${one.id}`)).status).toBe(404);
    expect((await req(tokenA, 'DELETE', `/api/admin/institution/${twinA.id}`)).status).toBe(403);
    expect((await req(tokenSuper, 'DELETE', `/api/admin/institution/${two.id}`)).body).toEqual({ success: true, message: 'Institution deleted' });
    expect(await findTwinById(db(), two.id)).toBeUndefined();
  });
});
