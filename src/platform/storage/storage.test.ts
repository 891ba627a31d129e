import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalStorage, newStorageKey, type FileStorage } from './storage.js';

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

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

  it('round-trips a buffer', async () => {
    const key = newStorageKey('uploads');
    const body = Buffer.from('hello, storage');
    expect(await storage.put(key, body)).toEqual({ size: body.length });
    expect(await storage.exists(key)).toBe(true);
    expect(await storage.read(key)).toEqual(body);
    expect(await collect(storage.get(key))).toEqual(body);
  });

  it('round-trips a stream and an async iterable', async () => {
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(4096, i));
    const expected = Buffer.concat(chunks);

    const streamKey = newStorageKey();
    expect(await storage.put(streamKey, Readable.from(chunks))).toEqual({ size: expected.length });
    // Buffer#equals: vitest's deep equality walks 256k bytes one by one and takes seconds.
    expect((await storage.read(streamKey)).equals(expected)).toBe(true);

    const iterableKey = newStorageKey();
    async function* generate(): AsyncIterable<Uint8Array> {
      for (const chunk of chunks) yield new Uint8Array(chunk);
    }
    expect(await storage.put(iterableKey, generate())).toEqual({ size: expected.length });
    expect((await collect(storage.get(iterableKey))).equals(expected)).toBe(true);
  });

  it('replaces an existing file', async () => {
    const key = newStorageKey();
    await storage.put(key, Buffer.from('first version, longer'));
    await storage.put(key, Buffer.from('second'));
    expect((await storage.read(key)).toString()).toBe('second');
  });

  it('leaves no file behind when the source stream fails midway', async () => {
    const key = newStorageKey();
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1024, 1));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.put(key, failing)).rejects.toThrow('client went away');
    expect(await storage.exists(key)).toBe(false);
    expect(await listFiles(path.join(root, 'files'))).toEqual([]);
  });

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

  it('keeps the previous version when a replacing write fails', async () => {
    const key = newStorageKey();
    await storage.put(key, Buffer.from('good'));
    async function* failing(): AsyncIterable<Uint8Array> {
      yield new Uint8Array([1, 2, 3]);
      throw new Error('boom');
    }
    await expect(storage.put(key, failing())).rejects.toThrow('boom');
    expect((await storage.read(key)).toString()).toBe('good');
    expect(await listFiles(path.join(root, 'files'))).toHaveLength(1);
  });

  it('deletes, and treats deleting a missing key as done', async () => {
    const key = newStorageKey();
    await storage.put(key, Buffer.from('x'));
    await storage.delete(key);
    expect(await storage.exists(key)).toBe(false);
    await expect(storage.delete(key)).resolves.toBeUndefined();
    await expect(storage.delete('never/written')).resolves.toBeUndefined();
  });

  it('reports a missing key on read and on the get stream', async () => {
    await expect(storage.read('missing/key')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(collect(storage.get('missing/key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses keys that could escape the root or are not service-made', async () => {
    const bad = [
      '',
      '../outside',
      'a/../../outside',
      '/etc/passwd',
      'a//b',
      'a/',
      'a/./b',
      'Upper/case',
      'photo.jpg',
      'a\\b',
      'a b',
      'nul\0byte',
      'x'.repeat(600),
    ];
    for (const key of bad) {
      await expect(storage.put(key, Buffer.from('x')), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.read(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.exists(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.delete(key), key).rejects.toThrow(/Invalid storage key/);
      expect(() => storage.get(key), key).toThrow(/Invalid storage key/);
    }
    expect(await listFiles(root)).toEqual([]);
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
