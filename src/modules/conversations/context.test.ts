// A turn's context end to end through the SSE route: a memory value and a passage of the person's own
// file reach the model's system text and the history record; the Enable User Memory switch stops
// personal memory while shared memory stays; ragOnly tells the model to answer from the passages only;
// and long-term memory stores a fact the model proposes after the answer.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorFor } from '../../../test/support/assistants.js';
import { changesHeard } from '../../../test/support/changes.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { uploadAndIngest } from '../../../test/support/files.js';
import { readSse } from '../../../test/support/sse-client.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { createContextProviders } from './context-providers.js';
import { RAG_ONLY_HEADING } from './turn-context.js';
import { unnumbered } from '../../../test/support/frames.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;
let token: string;
let adminToken: string;
let twinId: string;
let twinRow: Awaited<ReturnType<typeof buildTwin>>;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'test', DEFAULT_MODEL: 'fake-chat' }, workers: true });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const twin = await buildTwin(t.platform.database.db);
  twinId = twin.id;
  const person = await buildUser(t.platform.database.db, { twin, credits: 100 });
  twinRow = twin;
  const admin = await buildUser(t.platform.database.db, { twin, role: 'admin', credits: 100 });
  token = await signIn(t.app, person.user.email);
  adminToken = await signIn(t.app, admin.user.email);
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, as = token) =>
  t.app.inject({ method, url, headers: { 'x-access-token': as }, payload });

async function ask(question: string, requestArgs: Record<string, unknown> = {}) {
  const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs }),
  });
  const frames = await readSse(response).rest();
  const complete = frames.find((frame) => frame.type === 'complete');
  if (!complete) throw new Error(`no complete frame: ${JSON.stringify(frames)}`);
  return { complete, frames, system: model.requests.at(-1)!.system };
}

describe('the context of a turn', () => {
  beforeAll(async () => {
    expect((await call('POST', '/api/user/memory', { key_name: 'favourite_colour', key_value: 'teal-green' })).statusCode).toBe(201);
    expect((await call('POST', '/api/user/memory', { key_name: 'office_hours', key_value: 'Tuesdays at noon', shared: true }, adminToken)).statusCode).toBe(201);
    const file = await uploadAndIngest(t, token, { filename: 'notes.md', content: '# Minerals\n\nThe zanzibarite crystal glows violet under ultraviolet light.\n' });
    expect(file.status).toBe('ready');
  });

  it('puts the memory values and the passage into the system text and records them', async () => {
    model.enqueue({ chunks: ['It glows violet.'] });
    const { complete, frames, system } = await ask('What does the zanzibarite crystal do?', { ragOnly: true });
    // Retrieval shows as the turn's first tool, between connected and the answer.
    expect(frames.map((frame) => frame.type)).toEqual(['connected', 'started', 'tool', 'tool', 'stream', 'complete', 'done']);
    expect(frames.slice(2, 4).map(unnumbered)).toEqual([
      { type: 'tool', name: 'retrieval', status: 'started' },
      { type: 'tool', name: 'retrieval', status: 'completed' },
    ]);
    expect(system).toContain('teal-green');
    expect(system).toContain('Tuesdays at noon');
    expect(system).toContain('zanzibarite crystal glows violet');
    expect(system).toContain(RAG_ONLY_HEADING);

    const record = (await call('GET', `/api/user/history/${complete.historyId}`)).json().data;
    expect(record.ragSearch.map((entry: { originalname: string }) => entry.originalname)).toContain('notes.md');
    expect(record.memories.map((memory: { key: string }) => memory.key)).toEqual(expect.arrayContaining(['favourite_colour', 'office_hours']));
  });

  it('leaves ragOnly out when not asked, and retrieval out for an assistant without it', async () => {
    // The system assistants retrieve (ragEnabled); this one of the person's own does not.
    const created = await call('POST', '/api/user/assistant', { name: 'No files', institution: '', ragEnabled: false });
    expect(created.statusCode).toBe(201);
    model.enqueue({ chunks: ['Fine.'] });
    const { frames, system } = await ask('What does the zanzibarite crystal do?', { assistant_id: created.json().data._id });
    expect(frames.filter((frame) => frame.type === 'tool')).toEqual([]);
    expect(system).not.toContain(RAG_ONLY_HEADING);
    expect(system).not.toContain('zanzibarite crystal glows violet');
  });

  it('uses no personal memory with the switch off, and still uses shared memory', async () => {
    expect((await call('PUT', '/api/user/setting', { userMemoryEnabled: false })).statusCode).toBe(200);
    model.enqueue({ chunks: ['Noted.'] });
    const { system } = await ask('When are office hours, and what colour do I like?');
    expect(system).not.toContain('teal-green');
    expect(system).toContain('Tuesdays at noon');
    expect((await call('PUT', '/api/user/setting', { userMemoryEnabled: true })).statusCode).toBe(200);
  });

  it('stores a fact the model proposes after the answer when the twin has long-term memory', async () => {
    await t.platform.jobs.drain('memory.extract', 20_000);
    await t.platform.database.db.update(twins).set({ longTermMemoryEnabled: true }).where(eq(twins.id, twinId));
    await changesHeard(t.app);
    model.enqueue({ chunks: ['Nice to meet a cellist.'] });
    model.enqueue({ chunks: ['{"facts":[{"key":"instrument","value":"cello"}]}'] });
    await ask('I play the cello in an orchestra.');
    // The job is queued after the answer without being awaited: wait for it to be sent and performed.
    type Row = { key_name: string; key_value: string; key_namespace: string };
    let rows: Row[] = [];
    for (let attempt = 0; attempt < 40 && !rows.some((row) => row.key_name === 'instrument'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await t.platform.jobs.drain('memory.extract', 20_000);
      rows = (await call('GET', '/api/user/memory')).json().data as Row[];
    }
    expect(rows).toContainEqual(expect.objectContaining({ key_name: 'instrument', key_value: 'cello', key_namespace: 'long-term' }));
  });
});

describe('after a turn', () => {
  it("queues long-term memory extraction only when the twin has it and the person's switch is on, as set now", async () => {
    const providers = createContextProviders({ database: t.platform.database, jobs: t.platform.jobs });
    const db = t.platform.database.db;
    // A person of their own: extraction is one queued job per person at a time.
    const { user: person } = await buildUser(db, { twin: twinRow, credits: 10 });
    const caller = { kind: 'person' as const, actor: await actorFor(db, person.id) };
    const turn = { historyId: 'a'.repeat(24), question: 'I keep bees.', answer: 'Lovely.' };
    const switchTo = (on: boolean) => db.update(users).set({ userMemoryEnabled: on }).where(eq(users.id, person.id));

    await switchTo(false);
    expect(await providers.afterTurn!(caller, turn, { longTermMemoryEnabled: true })).toBeNull();
    await switchTo(true);
    expect(await providers.afterTurn!(caller, turn, { longTermMemoryEnabled: false })).toBeNull();
    model.enqueue({ chunks: ['{"facts":[]}'] }); // for the queued job's own model call
    const queued = await providers.afterTurn!(caller, turn, { longTermMemoryEnabled: true });
    expect(queued).toEqual(expect.any(String));
    await t.platform.jobs.drain('memory.extract', 20_000);
  });
});
