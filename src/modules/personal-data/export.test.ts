// The export job itself: an archive of a person with 2,000 history records and 50 files is written in
// bounded memory (the heap and buffers measured while it runs), and a worker that dies mid-archive
// leaves no archive, no link and no mail behind; the retry then publishes a complete one.
import { randomBytes } from 'node:crypto';
import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser } from '../../../test/support/factories.js';
import { buildRecord, fullDetail } from '../../../test/support/history-factories.js';
import type { StorageBody } from '../../platform/storage/storage.js';
import { newStorageKey, type FileStorage } from '../../platform/storage/storage.js';
import { insertFile } from '../files/files.repo.js';
import { history } from '../history/history.tables.js';
import { archiveKey, performExport, type ExportJobDeps } from './export.job.js';
import { findExport, insertExport } from './exports.repo.js';
import { fullCollection } from '../../platform/processes/quiet-collection.js';

let t: TestApp;
const db = () => t.platform.database.db;
const deps = (storage: FileStorage = t.platform.storage): ExportJobDeps => ({
  db: db(),
  storage,
  mailer: t.platform.mailer,
  publicUrl: 'http://service.test',
  now: () => new Date(),
});
const outbox = () => (existsSync(path.join(t.dataDir, 'outbox')) ? readdirSync(path.join(t.dataDir, 'outbox')) : []);

const collect = fullCollection();
/**
 * A full collection whose freed buffers are already subtracted: V8 frees the backing stores of dead
 * ArrayBuffers concurrently after a collection, so `arrayBuffers` read right after one still counts
 * them (seen as 10-25 MB either way). The second collection first finishes the first one's sweep.
 */
const gc = () => {
  collect();
  collect();
};
const used = () => {
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.arrayBuffers;
};

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function personWithData(records: number, files: number, fileSize: number) {
  const { user, twin } = await buildUser(db());
  const first = await buildRecord(db(), { twinId: twin!.id, userId: user.id });
  const rows = Array.from({ length: records - 1 }, (_, i) => ({
    twinId: twin!.id,
    conversationId: first.conversationId,
    userId: user.id,
    assistantName: 'Tutor',
    question: `Question ${i} ${randomBytes(32).toString('hex')}`,
    answer: `Answer ${i} ${randomBytes(96).toString('hex')}`,
    status: 'complete' as const,
    toolCalls: fullDetail.toolCalls,
    subagents: fullDetail.subagents,
    ragSearch: fullDetail.ragSearch,
    memories: fullDetail.memories,
    reasoning: fullDetail.reasoning,
    createdAt: new Date(Date.now() - i * 1000),
  }));
  for (let i = 0; i < rows.length; i += 500) await db().insert(history).values(rows.slice(i, i + 500));
  const stored: Array<{ name: string; bytes: Buffer }> = [];
  for (let i = 0; i < files; i += 1) {
    const bytes = randomBytes(fileSize);
    const storageKey = newStorageKey('uploads');
    await t.platform.storage.put(storageKey, bytes);
    const name = `scan-${i}.pdf`;
    await insertFile(db(), { twinId: twin!.id, userId: user.id, originalname: name, extension: '.pdf', mimetype: 'application/pdf', kind: 'pdf', size: fileSize, storageKey, status: 'ready' });
    stored.push({ name, bytes });
  }
  return { user, stored };
}

describe('the export job', () => {
  it('writes the archive of 2,000 records and 50 files in bounded memory', async () => {
    const fileSize = 512 * 1024;
    const { user } = await personWithData(2000, 50, fileSize);
    const row = (await insertExport(db(), user.id))!;
    gc();
    const baseline = used();
    let peak = baseline;
    // Each sample follows a full collection, so it measures what the export holds, not its garbage.
    // The next sample waits four times as long as the last collection took: on a busy machine a
    // collection can outlast a fixed interval, and back-to-back collections would starve the export.
    let sampler: NodeJS.Timeout | undefined;
    const sample = (delay: number) => {
      sampler = setTimeout(() => {
        const started = performance.now();
        gc();
        peak = Math.max(peak, used());
        sample(Math.max(400, 4 * (performance.now() - started)));
      }, delay);
    };
    sample(400);
    try {
      await performExport(deps(), row.id, { attempt: 1, signal: new AbortController().signal });
    } finally {
      clearTimeout(sampler);
    }
    const done = (await findExport(db(), row.id))!;
    expect(done).toMatchObject({ status: 'ready', progress: 100 });
    // The archive holds the 25 MB of files and more; the process grew by far less while writing it.
    expect(done.size!).toBeGreaterThan(50 * fileSize);
    const growthMb = (peak - baseline) / (1024 * 1024);
    expect(growthMb).toBeLessThan(12);
    // And the archive is whole: every record, every file.
    const entries = unzipSync(new Uint8Array(await t.platform.storage.read(done.storageKey!)));
    expect(JSON.parse(strFromU8(entries['history.json']))).toHaveLength(2000);
    expect(Object.keys(entries).filter((name) => name.startsWith('files/'))).toHaveLength(50);
  }, 60_000);

  it('leaves no archive, link or mail when the worker dies mid-archive, and the retry publishes a whole one', async () => {
    const { user, stored } = await personWithData(5, 3, 256 * 1024);
    const row = (await insertExport(db(), user.id))!;
    const real = t.platform.storage;
    // The worker "dies" once 300 kB of the archive are written: the write stops in the middle.
    const dying: FileStorage = {
      ...real,
      put: (key: string, body: StorageBody) =>
        real.put(key, (async function* () {
          let written = 0;
          for await (const chunk of body as AsyncIterable<Uint8Array>) {
            written += chunk.length;
            if (written > 300 * 1024) throw new Error('worker killed');
            yield chunk;
          }
        })()),
    };
    const mailsBefore = outbox().length;
    await expect(performExport(deps(dying), row.id, { attempt: 1, signal: new AbortController().signal })).rejects.toThrow('worker killed');
    const failed = (await findExport(db(), row.id))!;
    expect(failed).toMatchObject({ status: 'queued', storageKey: null, tokenHash: null, progress: 0 });
    expect(await real.exists(archiveKey(row.id))).toBe(false);
    // Nothing under the key or beside it: the temporary file of the write is gone too.
    expect(readdirSync(path.join(t.dataDir, 'files', 'exports')).filter((name) => name.startsWith(row.id))).toEqual([]);
    expect(outbox()).toHaveLength(mailsBefore);

    await performExport(deps(), row.id, { attempt: 2, signal: new AbortController().signal });
    const done = (await findExport(db(), row.id))!;
    expect(done).toMatchObject({ status: 'ready', attempts: 2 });
    expect(done.tokenHash).not.toBeNull();
    expect(outbox()).toHaveLength(mailsBefore + 1);
    const entries = unzipSync(new Uint8Array(await real.read(done.storageKey!)));
    expect(JSON.parse(strFromU8(entries['history.json']))).toHaveLength(5);
    for (const file of stored) expect(Buffer.from(entries[`files/${file.name}`]).equals(file.bytes)).toBe(true);
    // Performing the finished job again (a duplicate delivery) changes nothing and mails nothing.
    await performExport(deps(), row.id, { attempt: 3, signal: new AbortController().signal });
    expect(outbox()).toHaveLength(mailsBefore + 1);
  });

  it('shows its progress while it runs', async () => {
    const { user } = await personWithData(3, 10, 64 * 1024);
    const row = (await insertExport(db(), user.id))!;
    const real = t.platform.storage;
    const seen: Array<{ status: string; progress: number }> = [];
    // Looks at the export's row each time a piece of the archive reaches storage.
    const watching: FileStorage = {
      ...real,
      put: (key: string, body: StorageBody) =>
        real.put(key, (async function* () {
          for await (const chunk of body as AsyncIterable<Uint8Array>) {
            const current = (await findExport(db(), row.id))!;
            seen.push({ status: current.status, progress: current.progress });
            yield chunk;
          }
        })()),
    };
    await performExport(deps(watching), row.id, { attempt: 1, signal: new AbortController().signal });
    expect(seen.every((entry) => entry.status === 'running' && entry.progress < 100)).toBe(true);
    const progress = seen.map((entry) => entry.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.some((value) => value > 0 && value < 100)).toBe(true);
    expect(new Set(progress).size).toBeGreaterThan(3);
    expect(await findExport(db(), row.id)).toMatchObject({ status: 'ready', progress: 100 });
  });

  it('marks the export failed when the last attempt fails', async () => {
    const { user } = await personWithData(2, 0, 0);
    const row = (await insertExport(db(), user.id))!;
    const broken: FileStorage = { ...t.platform.storage, put: async () => Promise.reject(new Error('disk full')) };
    await expect(performExport(deps(broken), row.id, { attempt: 4, signal: new AbortController().signal })).rejects.toThrow('disk full');
    expect(await findExport(db(), row.id)).toMatchObject({ status: 'failed', storageKey: null });
  });
});
