// POST /api/agent/branding: the spec's record by publicId, without a token; admin edits show up in it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
});
afterAll(() => t.close());

describe('POST /api/agent/branding', () => {
  it('answers exactly the branding record, without a token, and reflects admin edits', async () => {
    const twin = await buildTwin(db(), { ainame: 'Ada', picture: 'https://cdn.example/p.png' });
    const admin = await buildUser(db(), { twin, role: 'admin' });
    const token = await signIn(t.app, admin.user.email);
    const edit = await req(token, 'PUT', `/api/admin/institution/${twin.id}`, {
      about: 'We answer questions.', voice_agent_id: 'va-1', picture_dark_bg: 'https://cdn.example/d.png', picture_animated: 'https://cdn.example/a.gif',
    });
    expect(edit.status).toBe(200);
    const response = await req(null, 'POST', '/api/agent/branding', { publicId: twin.publicId });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      picture: 'https://cdn.example/p.png',
      picture_animated: 'https://cdn.example/a.gif',
      picture_bg: '',
      picture_dark_bg: 'https://cdn.example/d.png',
      voice_agent_id: 'va-1',
      about: 'We answer questions.',
      ainame: 'Ada',
      status: 'active',
      idpEnabled: false,
      questions: [],
    });
  });

  it('shows an inactive twin as inactive, and fails with {success, message, error} otherwise', async () => {
    const inactive = await buildTwin(db(), { status: 'inactive' });
    expect((await req(null, 'POST', '/api/agent/branding', { publicId: inactive.publicId })).body.status).toBe('inactive');
    const unknown = await req(null, 'POST', '/api/agent/branding', { publicId: '2f1e7a52-4b7e-4f43-9d3a-0c9a4a1d2e11' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, message: 'Digital Twin not found', error: 'No Digital Twin has this publicId' });
    const malformed = await req(null, 'POST', '/api/agent/branding', { publicId: 'not-a-uuid' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ success: false, message: 'Invalid publicId' });
    expect(malformed.body.error).toBeDefined();
  });
});
