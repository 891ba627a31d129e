// Voice sessions in the scaled shape: two real API processes on one PostgreSQL database and one Redis.
// The session opens on A (its token and first record), the relay socket connects to B (which uses the
// token and takes the record over), an exchange is written by B, and the end route sent to A closes
// the call on B (the bus) with 4000 ENDED; nothing stays held.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { buildTwin, buildUser } from './support/factories.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { startFakeRealtimeServer, type FakeRealtimeServer } from './support/fake-realtime-server.js';
import { scaledEnv, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { until } from './support/until.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.runIf(enabled)('a voice session across processes', () => {
  let database: TestDatabase;
  let model: FakeModelServer;
  let provider: FakeRealtimeServer;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    [database, model, provider] = await Promise.all([openTestDatabase(), startFakeModelServer(), startFakeRealtimeServer()]);
    const env = { ...scaledEnv(database.url!, model.url), REALTIME_BASE_URL: provider.url, REALTIME_MODEL: 'fake-realtime', RT_PRICE_AUDIO_OUT: '1' };
    [a, b] = await Promise.all([startProcess(SERVICE_MAIN, ['api'], env), startProcess(SERVICE_MAIN, ['api'], env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
    await Promise.all([model?.close(), provider?.close()]);
    await database?.close();
  });

  it('opens on A, runs on B, is ended from A', async () => {
    const twin = await buildTwin(database.db, { rtEnabled: true });
    const ada = await buildUser(database.db, { twin, credits: 100 });
    const token = await signInAt(a.url, ada.user.email, ada.password);
    const post = (base: string, path: string) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
    const opened = (await (await post(a.url, '/api/ai/rt/session')).json()) as { sessionId: string; url: string; token: string };
    const ws = new WebSocket(`${b.url.replace('http', 'ws')}${opened.url}&token=${opened.token}`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await until(() => provider.connections.some((connection) => connection.received.some((event) => event.type === 'session.update')));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from('across the bus').toString('base64') }));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    const records = async () => (await (await fetch(`${a.url}/api/user/history`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: Array<Record<string, unknown>> };
    await until(async () => (await records()).data.some((record) => record.status === 'complete'), 5_000);
    expect((await records()).data.find((record) => record.status === 'complete')).toMatchObject({ mode: 'voice', question: 'across the bus', answer: 'You said: across the bus', credits: 0.5 });

    expect((await post(a.url, `/api/ai/rt/session/${opened.sessionId}/end`)).status).toBe(200);
    expect(await closed).toEqual({ code: 4000, reason: 'ENDED' });
    await until(async () => (await records()).data.length === 1, 5_000);
    const balance = (await (await post(a.url, '/api/user/refresh/profile')).json()) as { profile: { credits: number } };
    expect(balance.profile.credits).toBeCloseTo(99.5, 6);
  });
});
