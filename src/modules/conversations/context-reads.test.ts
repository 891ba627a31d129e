// What a turn asks of files and memories, cached per process (context-reads.ts): served from memory
// while nothing changed (a change made without a notice shows it), fresh after a change of the twin's
// files or memories (migration 0018's notices), the person's memory switch read whenever they have
// personal memories, and nothing of another twin or person mixed in. On PGlite and on PostgreSQL,
// where the notice comes asynchronously (the feed's catchUp waits for it).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { uploadAndIngest } from '../../../test/support/files.js';
import type { Executor } from '../../platform/db/client.js';
import { updateFile } from '../files/files.repo.js';
import { deleteMemory, insertMemory } from '../memory/memory.repo.js';
import { updateUser } from '../users/users.repo.js';
import { cachedContextReads, type ContextReads } from './context-reads.js';

let t: TestApp;
let person: BuiltUser;
let reads: ContextReads;

beforeAll(async () => {
  t = await startTestApp({ workers: true });
  person = await buildUser(t.platform.database.db);
  reads = cachedContextReads(t.platform.database.db, t.app.changes);
});
afterAll(() => t.close());

/** A change made as if by hand, with no notice (triggers off for the transaction). */
async function silently(change: (tx: Executor) => Promise<unknown>): Promise<void> {
  await t.platform.database.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await change(tx);
  });
}

/** Every change committed so far has been heard by this process's feed. */
const heard = () => t.app.changes.catchUp();

describe('whether a person has files a search can see', () => {
  it('is cached until a file of the twin changes', async () => {
    const twinId = person.twin!.id;
    expect(await reads.searchableFiles(twinId, person.user.id)).toEqual({ own: false, shared: false });

    // Uploaded and ingested through the routes and the job: the notice makes the next answer fresh.
    const token = await signIn(t.app, person.user.email);
    const file = await uploadAndIngest(t, token, { filename: 'notes.txt', content: 'The lighthouse keeper logs the fog.' });
    await heard();
    expect(await reads.searchableFiles(twinId, person.user.id)).toEqual({ own: true, shared: false });

    // Changed without a notice: the cache still answers what it knew.
    await silently((tx) => updateFile(tx, file.uploadId as string, { shared: true }));
    expect(await reads.searchableFiles(twinId, person.user.id)).toEqual({ own: true, shared: false });

    // Any change of the twin's files drops it.
    await updateFile(t.platform.database.db, file.uploadId as string, { deletedAt: new Date() });
    await heard();
    expect(await reads.searchableFiles(twinId, person.user.id)).toEqual({ own: false, shared: false });
  });

  it('answers for each person and twin on its own', async () => {
    const other = await buildUser(t.platform.database.db);
    const token = await signIn(t.app, other.user.email);
    await uploadAndIngest(t, token, { filename: 'theirs.txt', content: 'Only the other twin holds this.' });
    await heard();
    expect(await reads.searchableFiles(other.twin!.id, other.user.id)).toEqual({ own: true, shared: false });
    expect(await reads.searchableFiles(person.twin!.id, other.user.id)).toEqual({ own: false, shared: false });
    expect(await reads.searchableFiles(other.twin!.id, person.user.id)).toEqual({ own: false, shared: false });
  });
});

describe('the memories a turn may recall', () => {
  const keys = (rows: readonly { keyName: string }[]) => rows.map((row) => row.keyName).sort();

  it('are cached until a memory of the twin changes, the switch read whenever personal ones exist', async () => {
    const db = t.platform.database.db;
    const { user, twin } = await buildUser(db);
    const shared = await insertMemory(db, { twinId: twin!.id, userId: user.id, keyName: 'motto', keyValue: 'Learn daily', shared: true });
    await heard();
    expect(keys(await reads.recallable(twin!.id, user.id, 1_000))).toEqual(['motto']);

    // Removed without a notice: still recalled from the cache.
    await silently((tx) => deleteMemory(tx, twin!.id, shared.id));
    expect(keys(await reads.recallable(twin!.id, user.id, 1_000))).toEqual(['motto']);

    // A personal memory, with its notice: fresh rows, and the switch (on) lets it in.
    await insertMemory(db, { twinId: twin!.id, userId: user.id, keyName: 'pet', keyValue: 'a cat named Io', shared: false });
    await heard();
    expect(keys(await reads.recallable(twin!.id, user.id, 1_000))).toEqual(['pet']);

    // The switch turned off (a change of the person's row, not of memories): read on the next turn.
    await updateUser(db, user.id, { userMemoryEnabled: false });
    expect(await reads.recallable(twin!.id, user.id, 1_000)).toEqual([]);
    await updateUser(db, user.id, { userMemoryEnabled: true });
    expect(keys(await reads.recallable(twin!.id, user.id, 1_000))).toEqual(['pet']);
  });

  it('with the switch off and the list cut by the limit, are the shared ones the database gives', async () => {
    const db = t.platform.database.db;
    const { user, twin } = await buildUser(db, { userMemoryEnabled: false });
    await insertMemory(db, { twinId: twin!.id, userId: user.id, keyName: 'old-shared', keyValue: 'x', shared: true });
    await insertMemory(db, { twinId: twin!.id, userId: user.id, keyName: 'newer-personal', keyValue: 'y', shared: false });
    await heard();
    expect(keys(await reads.recallable(twin!.id, user.id, 1))).toEqual(['old-shared']);
  });

  it('never mix another person’s personal memories or another twin’s in', async () => {
    const db = t.platform.database.db;
    const first = await buildUser(db);
    const second = await buildUser(db, { twin: first.twin });
    const elsewhere = await buildUser(db);
    await insertMemory(db, { twinId: first.twin!.id, userId: first.user.id, keyName: 'first-own', keyValue: 'a', shared: false });
    await insertMemory(db, { twinId: first.twin!.id, userId: second.user.id, keyName: 'second-own', keyValue: 'b', shared: false });
    await insertMemory(db, { twinId: elsewhere.twin!.id, userId: elsewhere.user.id, keyName: 'other-twin', keyValue: 'c', shared: true });
    await heard();
    expect(keys(await reads.recallable(first.twin!.id, first.user.id, 1_000))).toEqual(['first-own']);
    expect(keys(await reads.recallable(first.twin!.id, second.user.id, 1_000))).toEqual(['second-own']);
    expect(keys(await reads.recallable(elsewhere.twin!.id, first.user.id, 1_000))).toEqual(['other-twin']);
  });
});
