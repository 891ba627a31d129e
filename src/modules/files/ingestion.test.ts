// Durable ingestion: a worker killed in the middle of a job (queue stopped without grace while the
// embed stage is under way) leaves unfinished rows; the next worker on the same database finishes
// the job with exactly one set of chunks and no orphans, and search never saw a half file.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobQueue } from '../../platform/jobs/queue.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { getFile, search, uploadFile } from '../../../test/support/files.js';
import { defineIngestionJob, INGEST_JOB, ingestFile } from './ingestion.js';
import { retrievalSetupOf } from './retrieval.js';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.platform.jobs.start({ work: false }); // this process only sends; the workers below do the work
  const person = await buildUser(t.platform.database.db);
  token = await signIn(t.app, person.user.email);
});
afterAll(() => t.close());

async function chunkRows(fileId: string): Promise<Array<{ generation: number; chunk_index: number }>> {
  const result = (await t.platform.database.db.execute(
    sql`select generation, chunk_index from file_chunks where file_id = ${fileId} order by generation, chunk_index`,
  )) as unknown as { rows: Array<{ generation: number; chunk_index: number }> };
  return result.rows;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const longDocument = (word: string) =>
  Array.from({ length: 700 }, (_, i) => `Section ${i} of the manual about ${i === 650 ? word : 'routine matters'}, written out at length to make a full paragraph of text.`).join('\n\n');

describe('a worker killed mid-ingestion', () => {
  it('is finished by the next worker with exactly one set of chunks', async () => {
    const { embedder, hybrid } = retrievalSetupOf(t.platform.database);
    let stalled: () => void = () => {};
    const stalledAt = new Promise<void>((resolve) => (stalled = resolve));
    const storage = t.platform.storage;
    const database = t.platform.database;
    const dying = createJobQueue(database, { pollingIntervalSeconds: 0.5 });
    // The dying worker hangs once its first batch of chunks is written, until it is killed.
    defineIngestionJob(dying, {
      database,
      storage,
      embedder,
      hybrid,
      onProgress: ({ chunksWritten }, signal) => {
        if (chunksWritten === 0) return;
        stalled();
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    });
    await dying.start({ work: true });

    const upload = await uploadFile(t, token, { filename: 'manual.md', content: longDocument('heliotrope') });
    expect(upload.statusCode).toBe(201);
    const fileId = upload.json().uploadId as string;
    await stalledAt;
    const during = await getFile(t, token, fileId);
    expect(during).toMatchObject({ status: 'processing', stage: 'embed' });
    // The first batch is written but invisible: search never sees half a file.
    expect((await chunkRows(fileId)).length).toBe(64);
    expect((await search(t, token, 'routine manual')).some((r) => r.uploadId === fileId)).toBe(false);

    await dying.stop({ graceful: false }); // the worker dies mid-job

    const next = createJobQueue(database, { pollingIntervalSeconds: 0.5 });
    defineIngestionJob(next, { database, storage, embedder, hybrid });
    await next.start({ work: true });
    try {
      await next.drain(INGEST_JOB, 30_000);
    } finally {
      await next.stop({ graceful: true });
    }
    const after = await getFile(t, token, fileId);
    expect(after).toMatchObject({ status: 'ready', stage: 'finalize', progress: 100 });
    const rows = await chunkRows(fileId);
    expect(rows.length).toBe(after.chunkCount);
    expect(new Set(rows.map((r) => r.generation)).size).toBe(1);
    expect(rows.map((r) => r.chunk_index)).toEqual(Array.from({ length: after.chunkCount }, (_, i) => i));
    expect((await search(t, token, 'heliotrope'))[0].uploadId).toBe(fileId);
  });

  it('runs the same job twice to the same end (idempotent)', async () => {
    const upload = await uploadFile(t, token, { filename: 'twice.md', content: longDocument('amaranthine') });
    const fileId = upload.json().uploadId as string;
    const { embedder, hybrid } = retrievalSetupOf(t.platform.database);
    const deps = { database: t.platform.database, storage: t.platform.storage, embedder, hybrid };
    const context = { signal: new AbortController().signal, attempt: 1 };
    await ingestFile(deps, { fileId, generation: 1 }, context);
    const first = await chunkRows(fileId);
    await ingestFile(deps, { fileId, generation: 1 }, context); // a redelivery after completion is a no-op
    expect(await chunkRows(fileId)).toEqual(first);
    expect((await getFile(t, token, fileId)).chunkCount).toBe(first.length);
  });

  it('lets a stale job stop when a newer edit has taken over', async () => {
    const upload = await uploadFile(t, token, { filename: 'stale.md', content: 'first version with word oldenword' });
    const fileId = upload.json().uploadId as string;
    const edit = await t.app.inject({
      method: 'PUT',
      url: `/api/user/files/${fileId}/content`,
      headers: { 'x-access-token': token },
      payload: { content: 'second version with word newenword' },
    });
    expect(edit.statusCode).toBe(200);
    const { embedder, hybrid } = retrievalSetupOf(t.platform.database);
    const deps = { database: t.platform.database, storage: t.platform.storage, embedder, hybrid };
    const context = { signal: new AbortController().signal, attempt: 1 };
    await ingestFile(deps, { fileId, generation: 1 }, context); // the job of the first version: superseded
    expect(await chunkRows(fileId)).toEqual([]);
    await ingestFile(deps, { fileId, generation: 2 }, context);
    const rows = await chunkRows(fileId);
    expect(rows).toEqual([{ generation: 2, chunk_index: 0 }]);
    expect((await search(t, token, 'newenword'))[0].uploadId).toBe(fileId);
    await waitFor(async () => ((await getFile(t, token, fileId)).status === 'ready' ? true : undefined));
  });
});
