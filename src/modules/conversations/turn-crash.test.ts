// What a crash mid-answer leaves, and how it is settled: the journal saves the answer
// streamed so far without changing the record's version; the sweeper ends a streaming record whose
// process is gone as failed and interrupted, the saved part kept, nothing charged, the hold given back;
// a record of a process still heard from stays streaming. The real kill is in test/crash-recovery.test.ts.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICED, startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { readSse } from '../../../test/support/sse-client.js';
import { until } from '../../../test/support/until.js';
import { newId } from '../../platform/ids/ids.js';
import { creditLedger } from '../credits/credits.tables.js';
import { history } from '../history/history.tables.js';
import { users } from '../users/users.tables.js';
import { INTERRUPTED_TURN_ERROR, releaseStaleTurns, STALE_TURN_MS } from './turn-holds.js';
import { createTurnJournal } from './turn-journal.js';
import { historyVersion, startRecord } from './turn-record.repo.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat', ...PRICED } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const db = () => t.platform.database.db;

async function processRow(secondsSinceHeard: number): Promise<string> {
  const id = newId();
  await t.platform.database.executeSql(`insert into service_processes (id, role, seen_at) values ($1, 'all', now() - $2 * interval '1 second')`, [id, secondsSinceHeard]);
  return id;
}

async function versionOf(id: string): Promise<string> {
  const [row] = await db().select({ version: historyVersion }).from(history).where(eq(history.id, id));
  return row.version;
}

describe('a turn cut short by a crash', () => {
  it('keeps the answer streamed so far on the record, about every second, without changing its version', async () => {
    const { user, twin } = await buildUser(db(), { credits: 10 });
    const opened = await startRecord(db(), { twinId: twin!.id, userId: user.id, question: 'Tell me', hold: { account: 'user', amount: 3 } });
    const journal = createTurnJournal(db(), { saveEveryMs: 100, flushWithinMs: 20 });
    try {
      journal.opened(opened.id);
      journal.progress(opened.id, 'First ');
      journal.progress(opened.id, 'First part ');
      await until(async () => (await db().select().from(history).where(eq(history.id, opened.id)))[0].answer === 'First part ', 3_000);
      journal.finished(opened.id);
    } finally {
      await journal.close();
    }
    expect(await versionOf(opened.id)).toBe(opened.version);
  });

  it('is ended as interrupted once its process is gone: the saved part kept, nothing charged, the hold given back', async () => {
    const { user, twin } = await buildUser(db(), { credits: 10 });
    const gone = await processRow(60);
    const alive = await processRow(0);
    const lost = await startRecord(db(), { twinId: twin!.id, userId: user.id, question: 'Lost', hold: { account: 'user', amount: 3 }, processId: gone });
    const running = await startRecord(db(), { twinId: twin!.id, userId: user.id, question: 'Running', hold: { account: 'user', amount: 2 }, processId: alive });
    await db().update(history).set({ answer: 'The part that was sent' }).where(eq(history.id, lost.id));

    const sweep = () => releaseStaleTurns(db(), new Date(), STALE_TURN_MS, { selfId: t.platform.liveness.id, timeoutSeconds: 15 });
    expect(await sweep()).toBe(1);
    expect(await sweep()).toBe(0);

    const [ended] = await db().select().from(history).where(eq(history.id, lost.id));
    expect(ended).toMatchObject({ status: 'failed', error: INTERRUPTED_TURN_ERROR, answer: 'The part that was sent', credits: 0, heldCredits: 0 });
    expect(ended.completedAt).not.toBeNull();
    const [still] = await db().select().from(history).where(eq(history.id, running.id));
    expect(still).toMatchObject({ status: 'streaming', heldCredits: 2 });
    const [balance] = await db().select().from(users).where(eq(users.id, user.id));
    expect(balance).toMatchObject({ credits: 10, creditsHeld: 2 });
    const charges = await db().select().from(creditLedger).where(eq(creditLedger.userId, user.id));
    expect(charges.filter((row) => row.delta !== 0)).toEqual([]);
  });

  it('records the process answering on the turn, which this process never sweeps while it runs', async () => {
    const { user } = await buildUser(db(), { credits: 10 });
    const token = await signIn(t.app, user.email);
    model.enqueue({ chunks: ['Half ', 'an answer'], stallAfter: 1, usage: { prompt_tokens: 10, completion_tokens: 10 } });
    const controller = new AbortController();
    const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ inputs: ['Long question'], requestArgs: {} }),
      signal: controller.signal,
    });
    const frames = readSse(response);
    try {
      await until(async () => (await db().select().from(history).where(eq(history.userId, user.id)))[0]?.answer === 'Half ', 5_000);
      const [record] = await db().select().from(history).where(eq(history.userId, user.id));
      expect(record).toMatchObject({ status: 'streaming', processId: t.platform.liveness.id });
      expect(await releaseStaleTurns(db(), new Date(), STALE_TURN_MS, { selfId: t.platform.liveness.id, timeoutSeconds: 15 })).toBe(0);
    } finally {
      controller.abort();
      await frames.rest().catch(() => {});
    }
  });
});
