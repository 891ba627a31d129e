// Personal-data controls through the real routes, on an app with job workers and a real SMTP server:
// the counts in personal scope, the emailed ZIP export read back and compared with the API's own
// answers, the link before and after its expiry (the app's clock moved), another person's export,
// the scoped delete (its confirmation, what it removes, what it leaves), and the purge after the grace.
import { randomBytes } from 'node:crypto';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { buildRecord } from '../../../test/support/history-factories.js';
import { requester } from '../../../test/support/http.js';
import { authenticatorCode, post } from '../../../test/support/identity.js';
import { search, uploadAndIngest } from '../../../test/support/files.js';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findUserById, updateUser } from '../users/users.repo.js';
import { EXPORT_JOB } from './export.job.js';
import { DELETE_GRACE_DAYS, runPersonalRetention } from './personal-data.retention.js';

const HOUR = 3_600_000;
let clock = Date.now();
let smtp: TestSmtpServer;
let t: TestApp;
let req: ReturnType<typeof requester>;
let twin: TwinRow;
const db = () => t.platform.database.db;
const token: Record<'me' | 'other' | 'admin' | 'solo', string> = {} as never;
const ids: Record<string, string> = {};
const emails: Record<string, string> = {};
const original = { name: 'moon-notes.md', content: `# Moon\n\nThe zebracorn grazes on the quiet moon.\n${randomBytes(64).toString('hex')}\n` };

async function counts(who: keyof typeof token) {
  const response = await req(token[who], 'GET', '/api/user/data');
  expect(response.status).toBe(200);
  return response.body.counts as Record<string, number>;
}

async function exportReady(who: keyof typeof token): Promise<{ exportId: string; link: string }> {
  const started = await req(token[who], 'POST', '/api/user/data/export');
  expect(started.status).toBe(202);
  await t.platform.jobs.drain(EXPORT_JOB, 30_000);
  const status = await req(token[who], 'GET', `/api/user/data/export/${started.body.exportId}`);
  expect(status.body).toMatchObject({ status: 'ready', progress: 100, expired: false });
  const mail = await smtp.next((m) => m.to.includes(emails[who]) && /export is ready/.test(m.subject));
  const link = /https?:\/\/\S+\/download\?token=\S+/.exec(mail.text)?.[0];
  expect(link).toBeDefined();
  return { exportId: started.body.exportId, link: new URL(link!).pathname + new URL(link!).search };
}

function unzip(body: Buffer): Record<string, Uint8Array> {
  return unzipSync(new Uint8Array(body));
}
const json = (entries: Record<string, Uint8Array>, name: string) => JSON.parse(strFromU8(entries[name]));
const byId = <T extends { _id: string }>(rows: T[]) => [...rows].sort((a, b) => a._id.localeCompare(b._id));

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ env: { SMTP_URL: smtp.url }, workers: true, now: () => new Date(clock) });
  req = requester(t.app);
  twin = await buildTwin(db(), { memoryAdminsOnly: false });
  const people = {
    me: await buildUser(db(), { twin }),
    other: await buildUser(db(), { twin }),
    admin: await buildUser(db(), { twin, role: 'admin' }),
    solo: await buildUser(db(), { twin }),
  };
  for (const [who, built] of Object.entries(people)) {
    token[who as keyof typeof token] = await signIn(t.app, built.user.email);
    ids[who] = built.user.id;
    emails[who] = built.user.email;
  }
  // Mine: three records (one rated), two files, a collection, two personal memories, a personal
  // assistant I favorite (and which someone else favorites too).
  for (let i = 0; i < 3; i += 1) {
    const record = await buildRecord(db(), { twinId: twin.id, userId: ids.me, question: `My question ${i}` });
    ids[`record${i}`] = record.id;
  }
  expect((await req(token.me, 'POST', `/api/user/history/${ids.record0}/feedback`, { rating: 'up', comment: 'nice' })).status).toBe(200);
  ids.file = (await uploadAndIngest(t, token.me, { filename: original.name, content: original.content, contentType: 'text/markdown' }))._id;
  await uploadAndIngest(t, token.me, { filename: 'second.txt', content: 'The zebracorn also likes tea.', contentType: 'text/plain' });
  expect((await req(token.me, 'POST', '/api/user/files/collections', { name: 'Moon' })).status).toBe(201);
  for (const key of ['colour', 'pet']) expect((await req(token.me, 'POST', '/api/user/memory', { key_name: key, key_value: `my ${key}` })).status).toBe(201);
  // A memory I share is the twin's, not mine.
  expect((await req(token.me, 'POST', '/api/user/memory', { key_name: 'office', key_value: 'Room 4', shared: true })).status).toBe(201);
  const assistant = await req(token.me, 'POST', '/api/user/assistant', { name: 'My tutor', instructions: 'Teach me.', institution: '' });
  expect(assistant.status).toBe(201);
  ids.assistant = assistant.body.data._id;
  // An assistant I made in the twin belongs to the twin.
  const twinAssistant = await req(token.me, 'POST', '/api/user/assistant', { name: 'Twin tutor', instructions: 'Teach us.' });
  expect(twinAssistant.status).toBe(201);
  expect(twinAssistant.body.data.institution).toBe(twin.id);
  ids.twinAssistant = twinAssistant.body.data._id;
  expect((await req(token.me, 'POST', `/api/user/favoriteAssistants/${ids.assistant}`)).status).toBe(200);
  await updateUser(db(), ids.other, { favoriteAssistants: [ids.assistant] });
  // Someone else's rows, and the twin's: shared memory, a shared file, a twin assistant.
  await buildRecord(db(), { twinId: twin.id, userId: ids.other, question: 'Their question' });
  await uploadAndIngest(t, token.other, { filename: 'theirs.txt', content: 'The zebracorn belongs to them.', contentType: 'text/plain' });
  expect((await req(token.other, 'POST', '/api/user/memory', { key_name: 'theirs', key_value: 'their value' })).status).toBe(201);
  await uploadAndIngest(t, token.admin, { filename: 'twin.txt', content: 'The twin knows the zebracorn.', contentType: 'text/plain' }, { shared: 'true' });
  expect((await req(token.admin, 'POST', '/api/user/memory', { key_name: 'hours', key_value: '9-11', shared: true })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('GET /api/user/data', () => {
  it("counts the caller's own rows only, per kind", async () => {
    expect(await counts('me')).toEqual({
      conversations: 3, history: 3, files: 2, collections: 1, memory: 2, assistants: 1, favorites: 1, feedback: 1, sessions: 1,
    });
    expect(await counts('other')).toMatchObject({ history: 1, files: 1, memory: 1, assistants: 0, favorites: 1 });
  });

  it('refuses a launch session with the launch-scope code, and needs a session', async () => {
    const signed = await post(t.app, '/api/auth/sdk-sign', { email: `launched-${Date.now()}@example.test`, fname: 'Lee' }, token.admin);
    expect(signed.statusCode).toBe(200);
    const launch = (await post(t.app, '/api/auth/sdk-verify', { token: signed.json().token })).json().token as string;
    for (const [method, url] of [['GET', '/api/user/data'], ['POST', '/api/user/data/export'], ['POST', '/api/user/data/delete']] as const) {
      const refused = await req(launch, method, url, method === 'POST' ? { scope: 'all', password: 'x' } : undefined);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('LAUNCH_SCOPE_STEP_UP');
    }
    expect((await req(null, 'GET', '/api/user/data')).status).toBe(401);
  });
});

describe('the export', () => {
  let exportId: string;
  let link: string;

  it('answers the running export to a second request, then mails a link to a ZIP matching the API', async () => {
    const first = await req(token.me, 'POST', '/api/user/data/export');
    const second = await req(token.me, 'POST', '/api/user/data/export');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ success: true, exportId: expect.stringMatching(/^[0-9a-f]{24}$/), status: 'queued' });
    expect(second.status).toBe(202);
    expect(second.body.exportId).toBe(first.body.exportId);
    exportId = first.body.exportId;
    await t.platform.jobs.drain(EXPORT_JOB, 30_000);
    const status = await req(token.me, 'GET', `/api/user/data/export/${exportId}`);
    expect(status.body).toMatchObject({ success: true, exportId, status: 'ready', progress: 100, expired: false });
    expect(Date.parse(status.body.expiresAt) - Date.parse(status.body.readyAt)).toBe(24 * HOUR);

    const mail = await smtp.next((m) => m.to.includes(emails.me) && /export is ready/.test(m.subject));
    const url = new URL(/https?:\/\/\S+\/download\?token=\S+/.exec(mail.text)![0]);
    expect(url.pathname).toBe(`/api/user/data/export/${exportId}/download`);
    link = url.pathname + url.search;
    const download = await t.app.inject({ method: 'GET', url: link });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/zip');
    const entries = unzip(download.rawPayload);

    expect(strFromU8(entries['README.txt'])).toContain('history.json');
    for (const name of Object.keys(entries).filter((entry) => entry.endsWith('.json'))) expect(() => json(entries, name)).not.toThrow();
    // History: every record of mine, as GET /api/user/history/:id shows it; nobody else's.
    const history = json(entries, 'history.json');
    const listed = (await req(token.me, 'GET', '/api/user/history?limit=100')).body.data as Array<{ _id: string }>;
    expect(history.map((r: { _id: string }) => r._id).sort()).toEqual(listed.map((r) => r._id).sort());
    for (const record of history) expect(record).toEqual((await req(token.me, 'GET', `/api/user/history/${record._id}`)).body.data);
    // Files, memory and the assistant as their own routes answer; the twin's shared rows left out.
    const files = (await req(token.me, 'GET', '/api/user/files?limit=100')).body.data as Array<{ _id: string; user: string }>;
    expect(byId(json(entries, 'files.json'))).toEqual(byId(files.filter((file) => file.user === ids.me)));
    const memory = (await req(token.me, 'GET', '/api/user/memory')).body.data as Array<{ _id: string; shared: boolean }>;
    expect(memory.some((row) => row.shared)).toBe(true);
    expect(byId(json(entries, 'memory.json'))).toEqual(byId(memory.filter((row) => !row.shared)));
    const assistant = (await req(token.me, 'GET', `/api/user/assistant/${ids.assistant}`)).body.data;
    expect(json(entries, 'assistants.json')).toEqual([assistant]);
    expect(json(entries, 'favorites.json')).toEqual([ids.assistant]);
    expect(json(entries, 'feedback.json')).toEqual([expect.objectContaining({ history: ids.record0, rating: 'up', comment: 'nice' })]);
    expect(json(entries, 'collections.json')).toEqual([expect.objectContaining({ name: 'Moon', user: ids.me })]);
    expect(json(entries, 'conversations.json')).toHaveLength(3);
    expect(json(entries, 'sessions.json').length).toBeGreaterThanOrEqual(1);
    // The original upload, byte for byte.
    expect(Buffer.from(entries[`files/${original.name}`]).equals(Buffer.from(original.content))).toBe(true);
    expect(Object.keys(entries).filter((name) => name.startsWith('files/')).sort()).toEqual([`files/${original.name}`, 'files/second.txt']);
  });

  it("answers 404 for another person's export, a wrong token, or an unknown id", async () => {
    expect((await req(token.other, 'GET', `/api/user/data/export/${exportId}`)).status).toBe(404);
    expect((await req(token.me, 'GET', `/api/user/data/export/${'f'.repeat(24)}`)).body.code).toBe('EXPORT_NOT_FOUND');
    const wrong = await t.app.inject({ method: 'GET', url: `/api/user/data/export/${exportId}/download?token=not-the-token` });
    expect(wrong.statusCode).toBe(404);
    const { link: theirs } = await exportReady('other');
    // Their token does not open my export.
    const crossed = await t.app.inject({ method: 'GET', url: theirs.replace(/export\/[0-9a-f]{24}/, `export/${exportId}`) });
    expect(crossed.statusCode).toBe(404);
  });

  it('answers 410 once the link has expired, and the retention job deletes the archive', async () => {
    clock += 24 * HOUR - 60_000;
    expect((await t.app.inject({ method: 'GET', url: link })).statusCode).toBe(200);
    clock += 2 * 60_000;
    const expired = await t.app.inject({ method: 'GET', url: link });
    expect(expired.statusCode).toBe(410);
    expect(expired.json()).toMatchObject({ success: false, code: 'EXPORT_EXPIRED' });
    expect((await req(token.me, 'GET', `/api/user/data/export/${exportId}`)).body.expired).toBe(true);
    const report = await runPersonalRetention({ db: db(), storage: t.platform.storage, now: () => new Date(clock) });
    expect(report.archives).toBeGreaterThanOrEqual(1);
    expect(await t.platform.storage.exists(`exports/${exportId}`)).toBe(false);
    expect((await t.app.inject({ method: 'GET', url: link })).statusCode).toBe(410);
  });
});

describe('POST /api/user/data/delete', () => {
  it('refuses a session alone, a wrong password and a wrong code, deleting nothing', async () => {
    const before = await counts('me');
    const alone = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'all' });
    expect(alone.status).toBe(403);
    expect(alone.body).toMatchObject({ success: false, code: 'REAUTHENTICATION_REQUIRED' });
    const wrong = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'all', password: 'not my password' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('INVALID_PASSWORD');
    const code = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'all', code: '123456' });
    expect(code.status).toBe(400);
    expect(code.body.code).toBe('INVALID_CODE');
    expect((await req(token.me, 'POST', '/api/user/data/delete', { scope: 'everything', password: 'x' })).status).toBe(400);
    expect(await counts('me')).toEqual(before);
  });

  it('deletes my memory with the password, leaving the twin shared rows and others untouched', async () => {
    const before = await counts('me');
    const otherBefore = await counts('other');
    const deleted = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'memory', password: 'correct horse battery staple' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, deleted: { memory: 2 } });
    expect(await counts('me')).toEqual({ ...before, memory: 0 });
    expect(await counts('other')).toEqual(otherBefore);
    const mine = (await req(token.me, 'GET', '/api/user/memory')).body.data as Array<{ key_name: string; shared: boolean }>;
    expect(mine.map((row) => row.key_name).sort()).toEqual(['hours', 'office']);
    const theirs = (await req(token.other, 'GET', '/api/user/memory')).body.data as Array<{ key_name: string }>;
    expect(theirs.map((row) => row.key_name).sort()).toEqual(['hours', 'office', 'theirs']);
  });

  it('deletes my files with an authenticator code: gone from lists, reads and retrieval at once', async () => {
    const setup = await req(token.me, 'POST', '/api/user/me/totp/setup');
    const secret = setup.body.secret as string;
    const confirmed = await req(token.me, 'POST', '/api/user/me/totp/confirm', { code: authenticatorCode(secret) });
    expect(confirmed.status).toBe(200);
    ids.backupCode = confirmed.body.backupCodes[0];
    expect((await search(t, token.me, 'zebracorn')).some((hit) => hit.originalname === original.name)).toBe(true);
    const before = await counts('me');
    const deleted = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'files', code: authenticatorCode(secret, 1) });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, deleted: { files: 2, collections: 1 } });
    expect(await counts('me')).toEqual({ ...before, files: 0, collections: 0 });
    expect((await req(token.me, 'GET', '/api/user/files')).body.data.filter((file: { user: string }) => file.user === ids.me)).toEqual([]);
    expect((await req(token.me, 'GET', `/api/user/files/${ids.file}`)).status).toBe(404);
    expect((await req(token.me, 'GET', '/api/user/files/collections')).body.data ?? []).toEqual([]);
    const hits = await search(t, token.me, 'zebracorn');
    expect(hits.map((hit) => hit.originalname)).toEqual([]);
    // The twin's shared file is still found by its readers, and the other person's file by them.
    expect((await search(t, token.admin, 'zebracorn')).map((hit) => hit.originalname)).toEqual(['twin.txt']);
    expect((await search(t, token.other, 'zebracorn')).map((hit) => hit.originalname)).toEqual(['theirs.txt']);
  });

  it("deletes my assistants with a backup code, taking them out of everyone's favorites", async () => {
    const before = await counts('me');
    const deleted = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'assistants', code: ids.backupCode });
    expect(deleted.body).toEqual({ success: true, deleted: { assistants: 1 } });
    expect(await counts('me')).toEqual({ ...before, assistants: 0, favorites: 0 });
    expect((await findUserById(db(), ids.other))?.favoriteAssistants).toEqual([]);
    expect((await req(token.me, 'GET', `/api/user/assistant/${ids.assistant}`)).status).toBe(404);
    expect((await req(token.me, 'GET', `/api/user/assistant/${ids.twinAssistant}`)).body.data).toMatchObject({ status: 'active', institution: twin.id });
    // A backup code works once.
    expect((await req(token.me, 'POST', '/api/user/data/delete', { scope: 'assistants', code: ids.backupCode })).body.code).toBe('INVALID_CODE');
  });

  it('deletes my history with the password; the next export holds none of what was deleted', async () => {
    const before = await counts('me');
    const otherBefore = await counts('other');
    const deleted = await req(token.me, 'POST', '/api/user/data/delete', { scope: 'history', password: 'correct horse battery staple' });
    expect(deleted.body).toEqual({ success: true, deleted: { history: 3, voiceSessions: 0 } });
    expect(await counts('me')).toEqual({ ...before, history: 0, conversations: 0, feedback: 0 });
    expect(await counts('other')).toEqual(otherBefore);
    expect((await req(token.me, 'GET', '/api/user/history')).body.total).toBe(0);
    const { link } = await exportReady('me');
    const entries = unzip((await t.app.inject({ method: 'GET', url: link })).rawPayload);
    for (const kind of ['history', 'files', 'memory', 'assistants', 'feedback', 'collections', 'conversations', 'favorites', 'voice-sessions']) {
      expect(json(entries, `${kind}.json`)).toEqual([]);
    }
    expect(Object.keys(entries).some((name) => name.startsWith('files/'))).toBe(false);
  });

  it("'all' deletes every kind at once and answers each count", async () => {
    await buildRecord(db(), { twinId: twin.id, userId: ids.solo });
    expect((await req(token.solo, 'POST', '/api/user/memory', { key_name: 'k', key_value: 'v' })).status).toBe(201);
    const deleted = await req(token.solo, 'POST', '/api/user/data/delete', { scope: 'all', password: 'correct horse battery staple' });
    expect(deleted.body).toEqual({ success: true, deleted: { history: 1, voiceSessions: 0, files: 0, collections: 0, memory: 1, assistants: 0 } });
    expect(await counts('solo')).toMatchObject({ history: 0, memory: 0, files: 0, assistants: 0 });
  });

  it(`purges the deleted rows and stored files after ${DELETE_GRACE_DAYS} days, not before`, async () => {
    const early = await runPersonalRetention({ db: db(), storage: t.platform.storage, now: () => new Date(clock + (DELETE_GRACE_DAYS - 1) * 24 * HOUR) });
    expect(early.purged).toEqual({ files: 0, collections: 0, memory: 0, assistants: 0, history: 0 });
    const late = await runPersonalRetention({ db: db(), storage: t.platform.storage, now: () => new Date(clock + (DELETE_GRACE_DAYS + 1) * 24 * HOUR) });
    expect(late.purged).toEqual({ files: 2, collections: 1, memory: 3, assistants: 1, history: 4 });
    const other = await counts('other');
    expect(other).toMatchObject({ history: 1, files: 1, memory: 1 });
  });
});
