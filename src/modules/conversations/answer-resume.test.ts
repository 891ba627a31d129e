// Resumable answers on one process, on the database of the run (PGlite, or PostgreSQL + Redis): a resume
// over SSE (Last-Event-ID or after=) and over a socket (RESUME_STREAM) gets exactly the frames after the
// one named, then follows to done; an ended answer replays to its end, an expired one answers 410
// STREAM_EXPIRED; another person 404; the resumable grace (resumed: completes and is charged in full;
// never resumed: cancelled, charged for its part); the cancel route; the running answers of the history;
// a log slow to write a running answer (a resume waits for it, never calling the answer interrupted).
import { eq } from 'drizzle-orm';
import type { Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { askQanda } from '../../../test/support/http.js';
import { collect, connectSocket, register } from '../../../test/support/socket-client.js';
import { readSse, type SseReader } from '../../../test/support/sse-client.js';
import { until } from '../../../test/support/until.js';
import { history } from '../history/history.tables.js';
import { findUserById } from '../users/users.repo.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;
const sockets: Socket[] = [];
const readers: SseReader[] = [];
/** What a test changed of the app (the log's writes), put back after it. */
const restores: Array<() => void> = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', ...PRICED, STREAM_RETENTION_SECONDS: '2', RESUME_GRACE_SECONDS: '1' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(async () => {
  for (const restore of restores.splice(0)) restore();
  for (const socket of sockets.splice(0)) socket.close();
  for (const reader of readers.splice(0)) await reader.cancel();
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const db = () => t.platform.database.db;
const WORDS = ['One ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight.'];
const ANSWER = WORDS.join('');

async function person(): Promise<BuiltUser & { token: string }> {
  const built = await buildUser(db(), { credits: 100 });
  return { ...built, token: await signIn(t.app, built.user.email) };
}

async function ask(token: string, requestArgs: Record<string, unknown> = {}, signal?: AbortSignal): Promise<SseReader> {
  const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: ['Count to eight'], requestArgs }),
    signal,
  });
  expect(response.status).toBe(200);
  const reader = readSse(response);
  readers.push(reader);
  return reader;
}

function resume(token: string, historyId: string, options: { lastEventId?: string; after?: number } = {}): Promise<Response> {
  const query = options.after === undefined ? '' : `?after=${options.after}`;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  return fetch(`${base}/api/ai/stream/${historyId}${query}`, { headers });
}

const textOf = (frames: Array<Record<string, unknown>>) => frames.filter((f) => f.type === 'stream').map((f) => f.delta).join('');
const recordOf = async (id: string) => (await db().select().from(history).where(eq(history.id, id)))[0];

/**
 * The log's next write lands `ms` late (its process or its Redis overloaded); the writes after it wait
 * their turn behind it, as they do. The log is put back after the test.
 */
function delayNextLogWrite(ms: number): void {
  const store = t.platform.streamLog.store;
  const write = store.write;
  let delayed = false;
  store.write = async (...args) => {
    if (!delayed) {
      delayed = true;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
    return write.apply(store, args);
  };
  restores.push(() => void (store.write = write));
}

/** Reads connected, started and `n` stream frames of a fresh answer; answers its id and the reader. */
async function startAnswer(token: string, n: number, requestArgs: Record<string, unknown> = {}, signal?: AbortSignal) {
  const reader = await ask(token, requestArgs, signal);
  expect(await reader.next()).toMatchObject({ type: 'connected' });
  const started = (await reader.next())!;
  expect(started).toMatchObject({ type: 'started', seq: 1 });
  const seen = [started];
  for (let i = 0; i < n; i++) seen.push((await reader.next())!);
  return { reader, historyId: started.historyId as string, seen };
}

describe('GET /api/ai/stream/{historyId}', () => {
  it('after N frames (Last-Event-ID) replays exactly frames N+1.. then follows to done; the text is the answer', async () => {
    const ada = await person();
    model.enqueue({ chunks: WORDS, gapMs: 60 });
    const live = await startAnswer(ada.token, 2);
    expect(live.reader.lastEventId).toBe(`${live.historyId}:3`);
    // A second reader (a reloaded tab) with the id of the last frame the page had.
    const resumed = readSse(await resume(ada.token, live.historyId, { lastEventId: live.reader.lastEventId }));
    readers.push(resumed);
    const rest = await resumed.rest();
    expect(rest.map((f) => f.seq)).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
    expect(rest.at(-2)).toMatchObject({ type: 'complete', outputs: [ANSWER] });
    expect(rest.at(-1)).toEqual({ type: 'done', seq: 11, historyId: live.historyId });
    expect(textOf([...live.seen, ...rest])).toBe(ANSWER);
    // The requester got the same frames live.
    expect(await live.reader.rest()).toEqual(rest);
  });

  it('replays an ended answer to its end (after= too), and the same frames each time', async () => {
    const ada = await person();
    model.enqueue({ chunks: WORDS });
    const reader = await ask(ada.token);
    const all = await reader.rest();
    const historyId = all[1].historyId as string;
    const replay = await readSse(await resume(ada.token, historyId)).rest();
    expect(replay).toEqual(all.slice(1));
    const tail = await readSse(await resume(ada.token, historyId, { after: 9 })).rest();
    expect(tail).toEqual(all.slice(10));
    expect(tail.map((f) => f.type)).toEqual(['complete', 'done']);
  });

  it('answers 410 STREAM_EXPIRED once the retention is over, 404 to another person, 400 to a Last-Event-ID of another answer', async () => {
    const ada = await person();
    const bob = await person();
    model.enqueue({ chunks: ['Short.'] });
    const all = await (await ask(ada.token)).rest();
    const historyId = all[1].historyId as string;
    const others = await resume(bob.token, historyId);
    expect(others.status).toBe(404);
    expect(await others.json()).toMatchObject({ success: false });
    const wrong = await resume(ada.token, historyId, { lastEventId: `${'a'.repeat(24)}:3` });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ success: false, code: 'INVALID_LAST_EVENT_ID' });
    await until(async () => (await resume(ada.token, historyId)).status === 410, 8_000);
    expect(await (await resume(ada.token, historyId)).json()).toMatchObject({ success: false, code: 'STREAM_EXPIRED' });
    expect((await resume(ada.token, 'b'.repeat(24))).status).toBe(404);
  });

  it("follows a running answer whose first frames reach the log late (an overloaded log), never calling it interrupted", async () => {
    const ada = await person();
    model.enqueue({ chunks: WORDS, gapMs: 250 });
    delayNextLogWrite(1_500);
    const live = await startAnswer(ada.token, 1);
    const resumed = readSse(await resume(ada.token, live.historyId, { after: 1 }));
    readers.push(resumed);
    const rest = await resumed.rest();
    expect(rest.filter((f) => f.type === 'error')).toEqual([]);
    expect(rest.at(-2)).toMatchObject({ type: 'complete', outputs: [ANSWER] });
    expect(rest.at(-1)).toMatchObject({ type: 'done', historyId: live.historyId });
    expect(rest.map((f) => f.seq)).toEqual(Array.from({ length: rest.length }, (_, i) => i + 2));
    expect(textOf(rest)).toBe(ANSWER);
  });

  it('lets a reader leave while the resume waits for a late log, and the answer and the next resume go on', async () => {
    const ada = await person();
    model.enqueue({ chunks: WORDS, gapMs: 250 });
    delayNextLogWrite(1_500);
    const live = await startAnswer(ada.token, 1);
    // This reader gives up before the log knows the answer.
    const leaving = new AbortController();
    const left = fetch(`${base}/api/ai/stream/${live.historyId}?after=1`, { headers: { authorization: `Bearer ${ada.token}` }, signal: leaving.signal }).catch((error: Error) => error.name);
    await new Promise((resolve) => setTimeout(resolve, 300));
    leaving.abort();
    expect(await left).toBe('AbortError');
    // The asker still gets the whole answer, and a later reader every frame after the one it names.
    const rest = await live.reader.rest();
    expect(rest.at(-1)).toMatchObject({ type: 'done' });
    expect(textOf([...live.seen, ...rest])).toBe(ANSWER);
    const again = await readSse(await resume(ada.token, live.historyId, { after: 2 })).rest();
    expect(again).toEqual(rest);
  });
});

describe('RESUME_STREAM', () => {
  it('sends the frames after afterSeq as socket events (RECEIVE_STREAM with the whole text so far), then follows to STREAM_DONE', async () => {
    const ada = await person();
    const socket = await connectSocket(base, { auth: { token: ada.token } });
    sockets.push(socket);
    await register(socket, ada.user.id);
    const chunks = collect<Record<string, unknown>>(socket, 'RECEIVE_STREAM');
    const completes = collect<Record<string, unknown>>(socket, 'STREAM_COMPLETE');
    const done = collect<Record<string, unknown>>(socket, 'STREAM_DONE');
    model.enqueue({ chunks: WORDS, gapMs: 60 });
    const { historyId } = await startAnswer(ada.token, 3);
    socket.emit('RESUME_STREAM', { historyId, afterSeq: 3 });
    await until(() => done.length === 1, 5_000);
    expect(chunks.map((c) => c.seq)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(chunks[0]).toEqual({ prompt: 'One two three ', delta: 'three ', type: 'STREAM', seq: 4, historyId });
    expect(chunks.at(-1)!.prompt).toBe(ANSWER);
    expect(completes).toEqual([expect.objectContaining({ seq: 10, historyId, outputs: [ANSWER] })]);
    expect(done).toEqual([{ seq: 11, historyId }]);
  });

  it("answers another person's answer with an error event", async () => {
    const ada = await person();
    const bob = await person();
    model.enqueue({ chunks: ['Mine.'] });
    const all = await (await ask(ada.token)).rest();
    const socket = await connectSocket(base, { auth: { token: bob.token } });
    sockets.push(socket);
    await register(socket, bob.user.id);
    const errors = collect<Record<string, unknown>>(socket, 'error');
    socket.emit('RESUME_STREAM', { historyId: all[1].historyId, afterSeq: 0 });
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });
});

describe('requestArgs.resumable', () => {
  it('goes on when the request closes, completes once resumed within the grace, and is charged in full', async () => {
    const ada = await person();
    model.enqueue({ chunks: WORDS, gapMs: 150, usage: { prompt_tokens: 1000, completion_tokens: 1000 } });
    const client = new AbortController();
    const { historyId, seen } = await startAnswer(ada.token, 2, { resumable: true }, client.signal);
    client.abort();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const rest = await readSse(await resume(ada.token, historyId, { lastEventId: `${historyId}:3` })).rest();
    expect(textOf([...seen, ...rest])).toBe(ANSWER);
    expect(rest.at(-2)).toMatchObject({ type: 'complete', credits: 2 });
    await until(async () => (await recordOf(historyId)).status === 'complete');
    expect(await recordOf(historyId)).toMatchObject({ answer: ANSWER, credits: 2 });
    expect((await findUserById(db(), ada.user.id))!.credits).toBe(98);
  });

  it('is cancelled after the grace when nobody resumes it, charged only for what was generated', async () => {
    const ada = await person();
    model.enqueue({ chunks: WORDS, gapMs: 400 });
    const client = new AbortController();
    const { historyId } = await startAnswer(ada.token, 1, { resumable: true }, client.signal);
    client.abort();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await recordOf(historyId)).status).toBe('streaming');
    await until(async () => (await recordOf(historyId)).status === 'cancelled', 5_000);
    const row = await recordOf(historyId);
    expect(row.answer.length).toBeGreaterThan(0);
    expect(row.answer.length).toBeLessThan(ANSWER.length);
    expect(row.credits).toBeGreaterThan(0);
    expect((await findUserById(db(), ada.user.id))!.credits).toBeCloseTo(100 - row.credits, 6);
    const replay = await readSse(await resume(ada.token, historyId)).rest();
    expect(replay.at(-1)).toMatchObject({ type: 'done' });
    expect(replay.some((f) => f.type === 'complete')).toBe(false);
  });
});

describe('POST /api/ai/stream/{historyId}/cancel and the running answers', () => {
  it('lists a running answer (history?status=streaming), stops it from another tab, and refuses another person', async () => {
    const ada = await person();
    const bob = await person();
    model.enqueue({ chunks: WORDS, gapMs: 200 });
    const { reader, historyId } = await startAnswer(ada.token, 1);
    const running = await fetch(`${base}/api/user/history?status=streaming`, { headers: { authorization: `Bearer ${ada.token}` } });
    expect((await running.json()).data.map((r: { _id?: string; id?: string }) => r._id ?? r.id)).toEqual([historyId]);
    const bobs = await fetch(`${base}/api/ai/stream/${historyId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${bob.token}` } });
    expect(bobs.status).toBe(404);
    const stop = await fetch(`${base}/api/ai/stream/${historyId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${ada.token}` } });
    expect(await stop.json()).toEqual({ success: true, cancelled: true });
    const rest = await reader.rest();
    expect(rest.at(-1)).toMatchObject({ type: 'done', historyId });
    await until(async () => (await recordOf(historyId)).status === 'cancelled');
    const after = await fetch(`${base}/api/ai/stream/${historyId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${ada.token}` } });
    expect(await after.json()).toEqual({ success: true, cancelled: false });
    const none = await fetch(`${base}/api/user/history?status=streaming`, { headers: { authorization: `Bearer ${ada.token}` } });
    expect((await none.json()).data).toEqual([]);
  });
});
