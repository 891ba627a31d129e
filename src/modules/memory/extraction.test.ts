// Long-term memory extraction through the real job queue against the fake model server, and recall
// (selection within the token budget, the value reaching the model's system context).
import { generateText } from 'ai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { requester } from '../../../test/support/http.js';
import { formatContextSections } from '../../ai/prompt.js';
import { createModelRegistry } from '../../ai/registry.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { updateUser } from '../users/users.repo.js';
import { EXTRACT_JOB, enqueueExtraction, extractMemories, normaliseKey, parseFacts } from './extraction.js';
import { insertMemory } from './memory.repo.js';
import type { MemoryRow } from './memory.tables.js';
import { memoryLines, recallForTurn, selectWithinBudget } from './recall.js';

let t: TestApp;
let fake: FakeModelServer;
let req: ReturnType<typeof requester>;
let twin: TwinRow;
let person: { id: string; token: string };
const db = () => t.platform.database.db;
const facts = (list: Array<{ key: string; value: string }>) => ({ chunks: [JSON.stringify({ facts: list })] });

async function longTermRows(token = person.token) {
  const list = await req(token, 'GET', '/api/user/memory');
  return list.body.data.filter((m: { key_namespace: string }) => m.key_namespace === 'long-term');
}

async function runJob(payload: { userId: string; institutionId: string; question: string; answer: string }) {
  expect(await enqueueExtraction(t.platform.jobs, payload)).toEqual(expect.any(String));
  await t.platform.jobs.drain(EXTRACT_JOB, 15_000);
}

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'test', DEFAULT_MODEL: 'fake' }, workers: true });
  req = requester(t.app);
  twin = await buildTwin(db(), { longTermMemoryEnabled: true });
  const built = await buildUser(db(), { twin });
  person = { id: built.user.id, token: await signIn(t.app, built.user.email) };
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

describe('memory.extract job', () => {
  const exchange = () => ({ userId: person.id, institutionId: twin.id, question: 'I am a nurse in Leeds, my favourite colour is teal.', answer: 'Noted!' });

  it('stores a fact the model proposes as a personal long-term row, and does not duplicate it on a second run', async () => {
    fake.enqueue({ chunks: ['```json\n{"facts":[{"key":"Favourite colour","value":"teal"}]}\n```'] });
    const before = fake.requests.length;
    await runJob(exchange());
    expect(fake.requests.length).toBe(before + 1);
    expect(fake.requests.at(-1)?.system).toContain('{"facts":[');
    expect(fake.requests.at(-1)?.messages.at(-1)?.content).toContain('my favourite colour is teal');
    const first = await longTermRows();
    expect(first).toEqual([expect.objectContaining({ key_name: 'Favourite colour', key_value: 'teal', shared: false, isAuthor: true, editable: true })]);

    fake.enqueue(facts([{ key: 'favourite_colour', value: 'Teal ' }]));
    await runJob(exchange());
    // The second request told the model what is already known.
    expect(JSON.stringify(fake.requests.at(-1)?.messages)).toContain('Favourite colour: teal');
    expect(await longTermRows()).toEqual(first);

    fake.enqueue(facts([{ key: 'Favourite Colour', value: 'green' }, { key: 'Job', value: 'nurse' }]));
    await runJob(exchange());
    const merged = await longTermRows();
    expect(merged).toHaveLength(2);
    expect(merged.find((m: { _id: string }) => m._id === first[0]._id)).toMatchObject({ key_value: 'green' });
    expect(merged.map((m: { key_name: string }) => m.key_name).sort()).toEqual(['Favourite colour', 'Job']);
  });

  it('does nothing (does not even ask the model) when the person switched memory off or the twin has no long-term memory', async () => {
    const before = fake.requests.length;
    await updateUser(db(), person.id, { userMemoryEnabled: false });
    fake.setDefault(facts([{ key: 'City', value: 'Leeds' }]));
    try {
      await runJob(exchange());
      await updateUser(db(), person.id, { userMemoryEnabled: true });
      const plain = await buildTwin(db());
      const other = await buildUser(db(), { twin: plain });
      await runJob({ ...exchange(), userId: other.user.id, institutionId: plain.id });
      expect(fake.requests.length).toBe(before);
      expect((await longTermRows()).map((m: { key_name: string }) => m.key_name)).not.toContain('City');
      expect(await longTermRows(await signIn(t.app, other.user.email))).toEqual([]);
    } finally {
      fake.setDefault({ chunks: ['ok'] });
      await updateUser(db(), person.id, { userMemoryEnabled: true });
    }
  });

  it('stores nothing from a reply that is not the JSON shape', async () => {
    const count = (await longTermRows()).length;
    fake.enqueue({ chunks: ['Sure! The person likes teal.'] });
    expect(await extractMemories({ db: db(), registry: createModelRegistry(t.config.model) }, exchange())).toBe('no-facts');
    expect(await longTermRows()).toHaveLength(count);
  });

  it('queues without waiting for the model, and a failure to queue never reaches the engine', async () => {
    // The model never answers this one: queuing returns at once all the same, and the job is left to time out.
    fake.enqueue({ chunks: ['{"facts":[]}'], stallAfter: 0 });
    const before = fake.requests.length;
    expect(await enqueueExtraction(t.platform.jobs, exchange())).toEqual(expect.any(String));
    await vi.waitFor(() => expect(fake.requests.length).toBe(before + 1), { timeout: 10_000, interval: 50 });
    expect(fake.requests.at(-1)?.aborted).toBe(false);
    const errors: string[] = [];
    const failing = { send: () => Promise.reject(new Error('database down')) };
    expect(await enqueueExtraction(failing, exchange(), { info: () => {}, error: (_o, m) => void errors.push(m ?? '') })).toBeNull();
    expect(errors).toEqual(['memory extraction could not be queued']);
  });

  it('skips extraction on the built-in local model', async () => {
    const before = fake.requests.length;
    const logged: string[] = [];
    const logger = { info: (_o: object, m?: string) => void logged.push(m ?? ''), error: () => {} };
    expect(await extractMemories({ db: db(), registry: createModelRegistry({}), logger }, exchange())).toBe('local-model');
    expect(fake.requests.length).toBe(before);
    expect(logged.join('')).toContain('local model cannot extract facts');
  });
});

describe('parseFacts', () => {
  it('reads the JSON shape defensively', () => {
    expect(parseFacts('noise {"facts":[{"key":" a ","value":"b"},{"key":"","value":"x"},{"key":"A","value":"dup"},{"value":"no key"},7]} tail')).toEqual([{ key: 'a', value: 'b' }]);
    expect(parseFacts('{"facts":[{"key":" a ","value":"b"},{"key":"","value":"x"},{"key":"A","value":"dup"}]}')).toEqual([{ key: 'a', value: 'b' }]);
    expect(parseFacts('{"facts": "none"}')).toEqual([]);
    expect(parseFacts('{not json}')).toEqual([]);
    expect(parseFacts('')).toEqual([]);
    expect(normaliseKey('Favourite_Colour ')).toBe(normaliseKey('favourite colour'));
  });
});

describe('recall', () => {
  const row = (key: string, value: string, shared = false): MemoryRow => ({
    id: key, twinId: twin.id, userId: person.id, keyName: key, keyValue: value, keyDescription: '', keyNamespace: 'default',
    shared, createdAt: new Date(), updatedAt: new Date(), deletedAt: null,
  });

  it('keeps every memory when they fit, else the most relevant within the budget (ties: newest first)', () => {
    const few = [row('pet', 'cat'), row('city', 'Leeds')];
    expect(selectWithinBudget(few, 'anything', 800)).toEqual(few);
    const filler = 'x'.repeat(380); // ~100 tokens each
    const many = [row('newest', filler), row('older', filler), row('dogs', `the dog is called Rex ${filler}`), ...Array.from({ length: 20 }, (_, i) => row(`n${i}`, filler))];
    const chosen = selectWithinBudget(many, 'What is my dog called?', 250).map((r) => r.id);
    expect(chosen).toEqual(['dogs', 'newest']);
  });

  it("puts a memory value into the model's system context", async () => {
    await insertMemory(db(), { twinId: twin.id, userId: person.id, keyName: 'Preferred name', keyValue: 'Captain Zebra' });
    const { memories } = await recallForTurn(db(), { userId: person.id, twinId: twin.id, userMemoryEnabled: true }, 'What is my name?');
    expect(memories).toContainEqual(expect.objectContaining({ key: 'Preferred name', value: 'Captain Zebra', shared: false }));
    const system = formatContextSections({ memories: memoryLines(memories) });
    expect(system).toContain('Preferred name: Captain Zebra');
    fake.enqueue({ chunks: ['Hello Captain'] });
    await generateText({ model: createModelRegistry(t.config.model).resolveModel().model, system, prompt: 'What is my name?' });
    expect(fake.requests.at(-1)?.system).toContain('Preferred name: Captain Zebra');
  });
});
