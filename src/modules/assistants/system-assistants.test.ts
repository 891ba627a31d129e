// The system assistants answer from a person's files (docs/decisions.md, "First steps"): a person without
// a file to search gets no search and no retrieval frames; their own ingested file is searched and the
// answer comes from it; a twin's shared file counts only for holders of files.access. Migration 0017
// turns retrieval on for system assistants an earlier start seeded, and leaves an edited one alone.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { openTestDatabase } from '../../../test/support/database.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { uploadAndIngest } from '../../../test/support/files.js';
import { readSse } from '../../../test/support/sse-client.js';
import { assistants } from './assistants.tables.js';
import { ensureSystemAssistants, SYSTEM_ASSISTANTS } from './seed.js';
import { unnumbered } from '../../../test/support/frames.js';

let t: TestApp;
let base: string;
let twin: Awaited<ReturnType<typeof buildTwin>>;

beforeAll(async () => {
  // No model endpoint: the built-in local model answers from the passages it is given.
  t = await startTestApp({ workers: true });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  twin = await buildTwin(t.platform.database.db);
});
afterAll(async () => {
  await t?.close();
});

async function person(grants: string[] = [], role: 'user' | 'admin' = 'user') {
  const built = await buildUser(t.platform.database.db, { twin, grants, role });
  return signIn(t.app, built.user.email);
}

/** A question to New Conversation over SSE: the frames, and the answer's history record. */
async function ask(token: string, question: string) {
  const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs: {} }),
  });
  expect(response.status).toBe(200);
  const frames = await readSse(response).rest();
  const complete = frames.find((frame) => frame.type === 'complete');
  if (!complete) throw new Error(`no complete frame: ${JSON.stringify(frames)}`);
  const record = await t.app.inject({ method: 'GET', url: `/api/user/history/${complete.historyId}`, headers: { 'x-access-token': token } });
  return { frames, answer: (complete.outputs as string[])[0], record: record.json().data as { ragSearch: Array<{ originalname: string }>; hasRagSearch: boolean } };
}

const RETRIEVAL_FRAMES = [
  { type: 'tool', name: 'retrieval', status: 'started' },
  { type: 'tool', name: 'retrieval', status: 'completed' },
];
const tools = (frames: Array<Record<string, unknown>>) => frames.filter((frame) => frame.type === 'tool').map(unnumbered);

describe('the system assistants and a person\'s files', () => {
  it('are seeded with retrieval on', () => {
    expect(SYSTEM_ASSISTANTS.map((row) => [row.systemKey, row.ragEnabled])).toEqual([
      ['new-conversation', true],
      ['writing-assistant', true],
      ['tutor', true],
    ]);
  });

  it('search nothing for a person without a file, and show no retrieval', async () => {
    const { frames, answer, record } = await ask(await person(), 'How long is the warranty on a kettle?');
    expect(tools(frames)).toEqual([]);
    expect(answer).toContain('found nothing');
    expect(record.hasRagSearch).toBe(false);
  });

  it("answer a person's first question about their uploaded file from it, with the source", async () => {
    const token = await person();
    const file = await uploadAndIngest(t, token, { filename: 'warranty.md', content: '# Warranty\n\nEvery kettle carries a warranty of two years from purchase.\n' });
    expect(file.status).toBe('ready');
    const { frames, answer, record } = await ask(token, 'How long is the warranty on a kettle?');
    expect(tools(frames)).toEqual(RETRIEVAL_FRAMES);
    expect(answer).toContain('Every kettle carries a warranty of two years from purchase.');
    expect(record.ragSearch.map((entry) => entry.originalname)).toEqual(['warranty.md']);
  });

  it("count a twin's shared file only for holders of files.access", async () => {
    const staff = await person([], 'admin');
    const shared = await uploadAndIngest(t, staff, { filename: 'opening.md', content: 'The library opens at eight on Saturdays.\n' }, { shared: 'true' });
    expect(shared).toMatchObject({ status: 'ready', shared: true });

    const reader = await ask(await person(['files.access']), 'When does the library open on Saturdays?');
    expect(tools(reader.frames)).toEqual(RETRIEVAL_FRAMES);
    expect(reader.answer).toContain('The library opens at eight on Saturdays.');

    const other = await ask(await person(), 'When does the library open on Saturdays?');
    expect(tools(other.frames)).toEqual([]);
    expect(other.answer).not.toContain('eight');
  });
});

describe('migration 0017', () => {
  it('turns retrieval on for system assistants as seeded, and keeps an edited one as the operator left it', async () => {
    const database = await openTestDatabase();
    try {
      const db = database.db;
      await ensureSystemAssistants(db);
      // As an earlier start seeded them: retrieval off; the Tutor edited since.
      await db.update(assistants).set({ ragEnabled: false, updatedAt: sql`created_at` }).where(sql`${assistants.systemKey} is not null`);
      await db.update(assistants).set({ ragEnabled: false, updatedAt: sql`created_at + interval '1 minute'` }).where(eq(assistants.systemKey, 'tutor'));
      const migration = readFileSync(path.join(import.meta.dirname, '../../platform/db/migrations/0017_system_assistants_rag.sql'), 'utf8');
      await db.execute(sql.raw(migration));
      const rows = await db.select({ key: assistants.systemKey, ragEnabled: assistants.ragEnabled }).from(assistants).where(sql`${assistants.systemKey} is not null`);
      expect(Object.fromEntries(rows.map((row) => [row.key, row.ragEnabled]))).toEqual({ 'new-conversation': true, 'writing-assistant': true, tutor: false });
    } finally {
      await database.close();
    }
  });
});
