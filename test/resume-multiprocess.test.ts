// Resumable answers across two API processes on one PostgreSQL database and one Redis: an answer asked on
// A is resumed on B (Last-Event-ID over SSE, RESUME_STREAM on a socket) with exactly the missed frames,
// then live to done; a cancel sent to B stops the answer A produces; A killed (SIGKILL) mid-answer: the
// reader on B gets the INTERRUPTED error and done within 30 s (here with PROCESS_TIMEOUT_SECONDS=2),
// numbered past anything A sent live, and a later resume after A's last live frame answers the same two.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildUser, type BuiltUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { collect, connectSocket, register } from './support/socket-client.js';
import { readSse, type SseReader } from './support/sse-client.js';
import { scaledEnv, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { until } from './support/until.js';
import { ORPHAN_SEQ_GAP } from '../src/platform/realtime/stream-log.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const WORDS = ['One ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight.'];
const ANSWER = WORDS.join('');

describe.runIf(enabled)('resumable answers across two API processes', () => {
  let database: TestDatabase;
  let model: FakeModelServer;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let ada: BuiltUser;
  let token: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    [database, model] = await Promise.all([openTestDatabase(), startFakeModelServer()]);
    env = { ...scaledEnv(database.url!, model.url), PROCESS_TIMEOUT_SECONDS: '2' };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
    ada = await buildUser(database.db, { credits: 1000 });
    token = await signInAt(a.url, ada.user.email, ada.password);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await model?.close();
    await database?.close();
  });

  async function askOn(url: string): Promise<SseReader> {
    const response = await fetch(`${url}/api/ai/personal-stream/qanda-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ inputs: ['Count to eight'] }),
    });
    expect(response.status).toBe(200);
    return readSse(response);
  }

  /** connected, started and n stream frames. */
  async function readStart(reader: SseReader, n: number) {
    expect(await reader.next()).toMatchObject({ type: 'connected' });
    const seen = [(await reader.next())!];
    for (let i = 0; i < n; i++) seen.push((await reader.next())!);
    return { historyId: seen[0].historyId as string, seen };
  }

  const resumeOn = (url: string, historyId: string, lastEventId?: string) =>
    fetch(`${url}/api/ai/stream/${historyId}`, { headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } });

  it('resumes on B an answer A produces: exactly the frames after Last-Event-ID, live to done, on SSE and on a socket', async () => {
    model.enqueue({ chunks: WORDS, gapMs: 80 });
    const live = await askOn(a.url);
    const { historyId, seen } = await readStart(live, 2);
    const socket = await connectSocket(b.url, { auth: { token } });
    try {
      await register(socket, ada.user.id);
      const chunks = collect<Record<string, unknown>>(socket, 'RECEIVE_STREAM');
      const done = collect<Record<string, unknown>>(socket, 'STREAM_DONE');
      socket.emit('RESUME_STREAM', { historyId, afterSeq: 3 });
      const rest = await readSse(await resumeOn(b.url, historyId, live.lastEventId)).rest();
      expect(rest.map((f) => f.seq)).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
      expect([...seen, ...rest].filter((f) => f.type === 'stream').map((f) => f.delta).join('')).toBe(ANSWER);
      expect(rest.at(-1)).toEqual({ type: 'done', seq: 11, historyId });
      expect(await live.rest()).toEqual(rest);
      await until(() => done.length === 1, 5_000);
      expect(chunks.map((c) => c.seq)).toEqual([4, 5, 6, 7, 8, 9]);
      expect(chunks.at(-1)!.prompt).toBe(ANSWER);
    } finally {
      socket.close();
    }
  }, 30_000);

  it('stops on a cancel sent to B the answer A produces', async () => {
    model.enqueue({ chunks: WORDS, gapMs: 300 });
    const live = await askOn(a.url);
    const { historyId } = await readStart(live, 1);
    const stop = await fetch(`${b.url}/api/ai/stream/${historyId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(await stop.json()).toEqual({ success: true, cancelled: true });
    const rest = await live.rest();
    expect(rest.at(-1)).toMatchObject({ type: 'done', historyId });
    expect(rest.some((f) => f.type === 'complete')).toBe(false);
  }, 30_000);

  it('ends the answer with INTERRUPTED and done for the reader on B when A is killed mid-answer, and a later resume answers the same', async () => {
    model.enqueue({ chunks: WORDS, gapMs: 500 });
    const live = await askOn(a.url);
    const { historyId } = await readStart(live, 1);
    const follower = readSse(await resumeOn(b.url, historyId, `${historyId}:2`));
    // What A's own reader got live, until A died (a frame sent in A's last flush interval is never logged).
    const seenLive: Array<Record<string, unknown>> = [];
    const liveEnded = (async () => {
      try {
        for (let frame = await live.next(); frame; frame = await live.next()) seenLive.push(frame);
      } catch {
        // The connection dies with A.
      }
    })();
    // Killed once B has read frame 3 from the log.
    const third = (await follower.next())!;
    expect(third).toMatchObject({ seq: 3, historyId });
    a.child.kill('SIGKILL');
    await a.exited;
    await liveEnded;
    const killedAt = Date.now();
    const rest = [third, ...(await follower.rest())];
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    const end = rest.slice(-2);
    const logged = rest.slice(0, -2);
    expect(end).toEqual([
      { type: 'error', error: { message: expect.any(String), code: 'INTERRUPTED' }, seq: logged.at(-1)!.seq as number + ORPHAN_SEQ_GAP + 1, historyId },
      { type: 'done', seq: (end[0].seq as number) + 1, historyId },
    ]);
    expect(logged.map((f) => f.seq)).toEqual(Array.from({ length: logged.length }, (_, i) => i + 3));
    // The orphan frames come after anything A sent live: a reader that saw A's last frame resumes to them.
    const lastLive = Math.max(...seenLive.map((frame) => (frame.seq as number | undefined) ?? 0));
    expect(lastLive).toBeGreaterThanOrEqual(3);
    expect(end[0].seq as number).toBeGreaterThan(lastLive);
    const later = await readSse(await resumeOn(b.url, historyId, `${historyId}:${lastLive}`)).rest();
    expect(later).toEqual(end);
  }, 60_000);
});
