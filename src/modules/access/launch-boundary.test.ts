// A launch session is confined to its twin for everything it may reach (behaviour 16). The administrator
// of twin B opens one as a person of twin A (a launch token names any address); through every route the
// session may use, nothing the person owns in twin A is found: files (read, download, change, delete),
// collections (ZIP), history, memory, approval cards, favorite assistants, resuming or stopping an answer. The person's own full session
// still reaches all of it.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildAssistant } from '../../../test/support/assistants.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { uploadFile } from '../../../test/support/files.js';
import { buildRecord } from '../../../test/support/history-factories.js';
import { post } from '../../../test/support/identity.js';
import { newId } from '../../platform/ids/ids.js';
import { insertCard } from '../approvals/approvals.repo.js';
import { insertCollection } from '../files/files.repo.js';
import { files } from '../files/files.tables.js';
import { insertMemory } from '../memory/memory.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';

let t: TestApp;
let twinA: TwinRow;
let person: BuiltUser;
let personToken: string;
let launch: string;
const owned = { file: '', collection: '', record: '', memory: '', card: '', assistant: '' };

const db = () => t.platform.database.db;
const as = (token: string, method: 'GET' | 'PUT' | 'DELETE' | 'PATCH' | 'POST', url: string, payload?: object) =>
  t.app.inject({ method, url, headers: { 'x-access-token': token }, ...(payload ? { payload } : {}) });

beforeAll(async () => {
  t = await startTestApp({ workers: true });
  twinA = await buildTwin(db());
  person = await buildUser(db(), { twin: twinA });
  personToken = await signIn(t.app, person.user.email);

  const upload = await uploadFile(t, personToken, { filename: 'diary.txt', contentType: 'text/plain', content: 'My private diary' });
  expect(upload.statusCode).toBe(201);
  owned.file = upload.json().uploadId;
  owned.collection = (await insertCollection(db(), { twinId: twinA.id, userId: person.user.id, name: 'Private' })).id;
  await db().update(files).set({ collectionId: owned.collection }).where(eq(files.id, owned.file));
  owned.record = (await buildRecord(db(), { twinId: twinA.id, userId: person.user.id })).id;
  owned.memory = (await insertMemory(db(), { twinId: twinA.id, userId: person.user.id, keyName: 'pin', keyValue: '4321', shared: false })).id;
  owned.card = (
    await insertCard(db(), {
      twinId: twinA.id,
      userId: person.user.id,
      historyId: owned.record,
      conversationId: newId(),
      serverId: newId(),
      serverName: 'Bank',
      tool: 'transfer',
      expiresAt: new Date(Date.now() + 600_000),
    })
  ).id;
  owned.assistant = (await buildAssistant(db(), { twinId: twinA.id, userId: person.user.id, name: 'Private tutor' })).id;
  await db().update(users).set({ favoriteAssistants: [owned.assistant] }).where(eq(users.id, person.user.id));

  // Twin B's administrator opens a launch session in twin B as the person.
  const twinB = await buildTwin(db());
  const admin = await buildUser(db(), { twin: twinB, role: 'admin' });
  const signed = await post(t.app, '/api/auth/sdk-sign', { email: person.user.email }, await signIn(t.app, admin.user.email));
  expect(signed.statusCode).toBe(200);
  const verified = await post(t.app, '/api/auth/sdk-verify', { token: signed.json().token });
  expect(verified.statusCode).toBe(200);
  launch = verified.json().token;
});
afterAll(async () => {
  await t?.close();
});

describe("a launch session of twin B and the person's rows of twin A", () => {
  it('finds none of their files: read, download, change, delete answer 404', async () => {
    for (const [method, url, payload] of [
      ['GET', `/api/user/files/${owned.file}`],
      ['GET', `/api/user/files/${owned.file}/download`],
      ['PUT', `/api/user/files/${owned.file}/content`, { content: 'overwritten' }],
      ['DELETE', `/api/user/files/${owned.file}`],
    ] as const) {
      const response = await as(launch, method, url, payload);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.body).not.toContain('My private diary');
    }
    const own = await as(personToken, 'GET', `/api/user/files/${owned.file}/download`);
    expect(own.statusCode).toBe(200);
    expect(own.body).toBe('My private diary');
  });

  it("does not download their collection's ZIP", async () => {
    const response = await as(launch, 'GET', `/api/user/files/collections/${owned.collection}/zip`);
    expect(response.statusCode).toBe(404);
    expect((await as(personToken, 'GET', `/api/user/files/collections/${owned.collection}/zip`)).statusCode).toBe(200);
  });

  it('finds neither their history record nor their memory (their services hold this too)', async () => {
    expect((await as(launch, 'GET', `/api/user/history/${owned.record}`)).statusCode).toBe(404);
    expect((await as(launch, 'DELETE', `/api/user/history/${owned.record}`)).statusCode).toBe(404);
    expect((await as(launch, 'PATCH', `/api/user/memory/${owned.memory}`, { key_value: 'stolen' })).statusCode).toBe(404);
    expect((await as(launch, 'DELETE', `/api/user/memory/${owned.memory}`)).statusCode).toBe(404);
    expect((await as(personToken, 'GET', `/api/user/history/${owned.record}`)).statusCode).toBe(200);
  });

  it('neither resumes nor stops their answer (SSE resume and cancel answer 404)', async () => {
    const bearer = (token: string, method: 'GET' | 'POST', url: string) => t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` } });
    expect((await bearer(launch, 'GET', `/api/ai/stream/${owned.record}?after=0`)).statusCode).toBe(404);
    expect((await bearer(launch, 'POST', `/api/ai/stream/${owned.record}/cancel`)).statusCode).toBe(404);
    // The person's own session finds it (an ended answer with no frames kept: not a 404).
    expect((await bearer(personToken, 'POST', `/api/ai/stream/${owned.record}/cancel`)).statusCode).toBe(200);
  });

  it('cannot decide their approval card', async () => {
    const response = await as(launch, 'POST', `/api/ai/approval/${owned.card}`, { decision: 'approve' });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('APPROVAL_NOT_FOUND');
    const own = await as(personToken, 'POST', `/api/ai/approval/${owned.card}`, { decision: 'deny' });
    expect(own.statusCode).toBe(200);
  });

  it("does not see their twin A assistant among the profile's favorites", async () => {
    const launched = await as(launch, 'POST', '/api/user/refresh/profile', {});
    expect(launched.statusCode).toBe(200);
    expect(launched.body).not.toContain('Private tutor');
    const own = await as(personToken, 'POST', '/api/user/refresh/profile', {});
    expect(own.body).toContain('Private tutor');
  });
});
