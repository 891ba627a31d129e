// Graceful shutdown of a real process (`npm start`'s entry, embedded default): on SIGTERM it stops
// accepting, lets the answer being streamed finish, and exits 0.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededDataDir } from './support/database.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { startProcess, SERVICE_MAIN } from './support/processes.js';
import { readSse } from './support/sse-client.js';

let model: FakeModelServer;
let dataDir: string;

beforeAll(async () => {
  model = await startFakeModelServer();
  dataDir = seededDataDir('dt-shutdown-');
});
afterAll(async () => {
  await model.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('SIGTERM', () => {
  it('finishes the answer in flight, refuses new work and exits 0', async () => {
    const service = await startProcess(SERVICE_MAIN, [], {
      DATA_DIR: dataDir,
      ADMIN_EMAIL: 'root@example.test',
      ADMIN_PASSWORD: 'long-enough-password',
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'test',
      DEFAULT_MODEL: 'fake-chat',
      SHUTDOWN_GRACE_MS: '10000',
      DATABASE_URL: '',
      REDIS_URL: '',
    });
    const { child, exited } = service;
    const base = service.url;
    const signIn = await fetch(`${base}/api/auth/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'root@example.test', password: 'long-enough-password' }),
    });
    const { token } = await signIn.json();
    await fetch(`${base}/api/admin/user/${JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-access-token': token },
      body: JSON.stringify({ credits: 100 }),
    });

    model.enqueue({ chunks: ['One ', 'two ', 'three ', 'four.'], gapMs: 400 });
    const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ inputs: ['Count to four'] }),
    });
    const reader = readSse(response);
    expect((await reader.next())?.type).toBe('connected');
    expect((await reader.next())?.type).toBe('started');
    expect((await reader.next())?.type).toBe('stream');

    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await fetch(`${base}/api/test`).then((r) => r.status, () => 'refused');
    expect(refused === 'refused' || refused === 503).toBe(true);

    const rest = await reader.rest();
    const complete = rest.find((frame) => frame.type === 'complete');
    expect(complete).toMatchObject({ success: true, outputs: ['One two three four.'] });
    expect(rest.at(-1)).toEqual({ type: 'done', seq: (complete!.seq as number) + 1, historyId: complete!.historyId });
    expect(await exited).toBe(0);
  }, 60_000);
});
