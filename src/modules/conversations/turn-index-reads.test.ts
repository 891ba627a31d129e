// A turn finds its conversation by key, however many conversations the twin and the person hold. The
// opening and the settle run as kept plans, planned in their first turns while the tables are nearly
// empty; such a plan once read every conversation of the twin through an index led by the twin, on
// every turn (the cost grew with the deployment's age). Counted here in index entries read, as the
// database reports them. Runs on PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { readSse } from '../../../test/support/sse-client.js';
import { until } from '../../../test/support/until.js';

let t: TestApp;
let model: FakeModelServer;
let base: string;

beforeAll(async () => {
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

const sql = (text: string, values?: unknown[]) => t.platform.database.executeSql(text, values);

/** The turn's complete frame, once the answer has streamed to its end. */
async function ask(token: string, conversationId?: string): Promise<{ conversationId: string }> {
  const response = await fetch(`${base}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: ['Hello?'], requestArgs: conversationId ? { conversationId } : {} }),
  });
  const frames = (await readSse(response).rest()) as Array<Record<string, unknown>>;
  const complete = frames.find((frame) => frame.type === 'complete');
  expect(complete).toMatchObject({ success: true });
  return { conversationId: complete!.conversationId as string };
}

/** Index entries read from the conversations table so far, and the scans that read them. */
async function conversationIndexReads(): Promise<{ scans: number; entries: number; rows: number }> {
  const { rows } = await sql(
    `select coalesce(sum(idx_scan), 0)::float8 as scans, coalesce(sum(idx_tup_read), 0)::float8 as entries,
            coalesce(sum(idx_tup_fetch), 0)::float8 as rows
       from pg_stat_user_indexes where relname = 'conversations'`,
  );
  return { scans: Number(rows[0].scans), entries: Number(rows[0].entries), rows: Number(rows[0].rows) };
}

/** The counts once every statement before has reached the statistics (a server's backends report theirs within a second). */
async function settledReads(atLeastScans: number): Promise<{ scans: number; entries: number; rows: number }> {
  let reads = { scans: 0, entries: 0, rows: 0 };
  await until(async () => {
    await sql('select pg_stat_force_next_flush()');
    await sql('select pg_stat_clear_snapshot()');
    reads = await conversationIndexReads();
    return reads.scans >= atLeastScans;
  }, 15_000);
  return reads;
}

describe("a turn's statements", () => {
  it('read a handful of index entries a turn, whether the twin holds ten conversations or thousands', async () => {
    const built = await buildUser(t.platform.database.db, {});
    const token = await signIn(t.app, built.user.email);
    // First turns: new conversations and one continued, more than the five custom plans a prepared
    // statement gets before its generic plan is kept.
    for (let i = 0; i < 7; i++) await ask(token);
    const { conversationId } = await ask(token);
    for (let i = 0; i < 7; i++) await ask(token, conversationId);

    // A twin in use for a while: 3,000 more conversations of the same person.
    await sql(
      `insert into conversations (id, institution_id, user_id, title, created_at, last_activity_at)
       select substr(md5('c' || g), 1, 24), $1, $2, '', now(), now() from generate_series(1, 3000) g`,
      [built.twin!.id, built.user.id],
    );
    // Every turn touches its conversation's last activity, which two indexes hold: each touch is a new
    // row version with an entry in every index, the key's too, until vacuum. The conversation continued
    // above has about ten such versions, and a lookup by its key reads each entry that was not yet
    // marked dead (a busy server marks them later). A twin in use has been vacuumed: so is this one.
    await sql('vacuum conversations');
    const before = await settledReads(1);

    const turns = 10;
    for (let i = 0; i < turns / 2; i++) await ask(token);
    for (let i = 0; i < turns / 2; i++) await ask(token, conversationId);
    const after = await settledReads(before.scans + turns);

    // Each turn: the conversation continued or its key checked by the record's insert, touched at the
    // settle, looked up by key: about five entries. A scan of the twin's conversations reads 3,000 each.
    // The live rows the index scans reached: a handful a turn. The entries they read also count the
    // continued conversation's row versions its touches left (two a turn, in every index, since the
    // last activity is indexed) until the server marks them dead, which a busy server does later:
    // tens a turn at worst, never the 3,000 of a scan of the twin.
    const rowsPerTurn = (after.rows - before.rows) / turns;
    expect(rowsPerTurn).toBeGreaterThan(0);
    expect(rowsPerTurn).toBeLessThan(10);
    const entriesPerTurn = (after.entries - before.entries) / turns;
    expect(entriesPerTurn).toBeLessThan(100);
  });
});
