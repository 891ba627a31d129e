// A person's voice sessions in their personal data: sessions opened through the real route (each row
// holds the person as the session saw them, email included) are in the export's voice-sessions.json,
// and the delete of history (or all) removes them; another person's sessions are neither exported nor
// deleted.
import { strFromU8, unzipSync } from 'fflate';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeRealtimeServer, type FakeRealtimeServer } from '../../../test/support/fake-realtime-server.js';
import { requester } from '../../../test/support/http.js';
import { rtSessions } from '../realtime-voice/rt-sessions.tables.js';
import { EXPORT_JOB } from './export.job.js';
import { findExport } from './exports.repo.js';

let t: TestApp;
let provider: FakeRealtimeServer;
let req: ReturnType<typeof requester>;
const db = () => t.platform.database.db;
const people: Record<'me' | 'other', { id: string; email: string; token: string }> = {} as never;
const PASSWORD = 'correct horse battery staple';

async function openSession(who: keyof typeof people): Promise<string> {
  const opened = await req(people[who].token, 'POST', '/api/ai/rt/session', {});
  expect(opened.status, JSON.stringify(opened.body)).toBe(200);
  return opened.body.sessionId as string;
}

async function exportedVoiceSessions(who: keyof typeof people): Promise<Array<Record<string, unknown>>> {
  const started = await req(people[who].token, 'POST', '/api/user/data/export');
  expect(started.status).toBe(202);
  await t.platform.jobs.drain(EXPORT_JOB, 30_000);
  const done = (await findExport(db(), started.body.exportId))!;
  expect(done.status).toBe('ready');
  const entries = unzipSync(new Uint8Array(await t.platform.storage.read(done.storageKey!)));
  expect(strFromU8(entries['README.txt'])).toContain('voice-sessions.json');
  return JSON.parse(strFromU8(entries['voice-sessions.json'])) as Array<Record<string, unknown>>;
}

beforeAll(async () => {
  provider = await startFakeRealtimeServer();
  t = await startTestApp({ env: { REALTIME_BASE_URL: provider.url, REALTIME_MODEL: 'fake-realtime' }, workers: true });
  req = requester(t.app);
  const twin = await buildTwin(db(), { rtEnabled: true });
  for (const who of ['me', 'other'] as const) {
    const built = await buildUser(db(), { twin, credits: 100, password: PASSWORD });
    people[who] = { id: built.user.id, email: built.user.email, token: await signIn(t.app, built.user.email) };
  }
}, 60_000);

afterAll(async () => {
  await t?.close();
  await provider?.close();
});

describe('voice sessions in personal data', () => {
  it("exports the caller's voice sessions, with the person as each saw them, and nobody else's", async () => {
    const ended = await openSession('me');
    expect((await req(people.me.token, 'POST', `/api/ai/rt/session/${ended}/end`)).status).toBe(200);
    const open = await openSession('me');
    await openSession('other');

    const exported = await exportedVoiceSessions('me');
    expect(exported.map((row) => row._id).sort()).toEqual([ended, open].sort());
    for (const row of exported) expect(row.caller).toMatchObject({ email: people.me.email });
    expect(exported.find((row) => row._id === ended)).toMatchObject({ status: 'ended', endReason: 'ENDED', ended: expect.any(String) });
    expect(exported.find((row) => row._id === open)).toMatchObject({ status: 'open', ended: null, voice: expect.any(String) });
    expect(JSON.stringify(exported)).not.toContain(people.other.email);
  });

  it("the delete of history removes the caller's voice sessions (their email with them), and leaves another person's", async () => {
    const deleted = await req(people.me.token, 'POST', '/api/user/data/delete', { scope: 'history', password: PASSWORD });
    expect(deleted.status).toBe(200);
    expect(deleted.body.deleted).toMatchObject({ voiceSessions: 2 });
    expect(await db().select().from(rtSessions).where(eq(rtSessions.userId, people.me.id))).toEqual([]);
    const rows = await db().select().from(rtSessions);
    expect(JSON.stringify(rows)).not.toContain(people.me.email);
    expect(rows.filter((row) => row.userId === people.other.id)).toHaveLength(1);
    expect(await exportedVoiceSessions('me')).toEqual([]);
    // 'all' removes them too.
    expect((await req(people.other.token, 'POST', '/api/user/data/delete', { scope: 'all', password: PASSWORD })).body.deleted).toMatchObject({ voiceSessions: 1 });
  });
});
