// The local file store (DATA_DIR/files): the FileStorage contract every store keeps
// (test/support/storage-contract.ts), seen on disk, and the unfinished writes only this store leaves.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileStorageContract } from '../../../test/support/storage-contract.js';
import { createLocalStorage, newStorageKey, type FileStorage } from './storage.js';

/** Every file under dir, relative, so a test can assert that nothing (not even a .tmp) was left. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('createLocalStorage', () => {
  let root: string;
  let storage: FileStorage;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'storage-test-'));
    storage = createLocalStorage(path.join(root, 'files'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  // Seen from outside: every file under the test's folder (an escaping key would land beside files/),
  // with files/ dropped so stored objects read as their keys.
  fileStorageContract(() => ({
    storage,
    stored: async () => (await listFiles(root)).map((name) => name.replace(/^files\//, '')),
  }));

  it("removes the unfinished writes of a gone process, and only those", async () => {
    const files = path.join(root, 'files');
    const hang = (written: () => void) =>
      (async function* () {
        yield Buffer.alloc(1024, 1);
        written();
        await new Promise(() => {}); // the writer dies here: no more bytes, no rename
      })();
    // Two processes writing: one is killed mid-write, the other is still writing.
    const dead = createLocalStorage(files, { writerId: 'deadwriter' });
    const alive = createLocalStorage(files, { writerId: 'alivewriter' });
    for (const writer of [dead, alive]) await new Promise<void>((resolve) => void writer.put(newStorageKey(), hang(resolve)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await listFiles(files)).filter((name) => name.endsWith('.tmp'))).toHaveLength(2);

    const self = createLocalStorage(files, { writerId: 'sweeper' });
    const asked: string[][] = [];
    const removed = await self.removeAbandonedWrites(async (ids) => {
      asked.push([...ids].sort());
      return new Set(ids.filter((id) => id === 'deadwriter'));
    });
    expect(removed).toBe(1);
    expect(asked).toEqual([['alivewriter', 'deadwriter']]);
    expect(await listFiles(files)).toEqual([expect.stringMatching(/^\.partial\/alivewriter\/[0-9a-f]{16}\.tmp$/)]);
    // Nothing to ask about once only live writers are left... and its own folder is never a candidate.
    expect(await alive.removeAbandonedWrites(async () => new Set(['alivewriter']))).toBe(0);
  });
});

describe('newStorageKey', () => {
  it('is <prefix>/<yyyy>/<mm>/<24 hex> and unique', () => {
    const now = new Date();
    const month = String(now.getUTCMonth() + 1).padStart(2, '0');
    const key = newStorageKey('avatars');
    expect(key).toMatch(new RegExp(`^avatars/${now.getUTCFullYear()}/${month}/[0-9a-f]{24}$`));
    expect(newStorageKey()).toMatch(/^\d{4}\/\d{2}\/[0-9a-f]{24}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newStorageKey())).size).toBe(1000);
  });

  it('refuses a prefix that would make an invalid key', () => {
    expect(() => newStorageKey('../x')).toThrow(/Invalid storage key/);
  });
});
