// The FileStorage contract, one suite for every store: what the local store (DATA_DIR/files) and the
// S3 store both promise the code that uses them. Each store's test file runs it with its own set-up and
// a view from outside the store (`stored`: the files on disk, the keys in the bucket), and keeps beside
// it only what that store alone does (the local store's unfinished writes of a gone process; S3's
// multipart uploads, partial reads and unreachable buckets).
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { newStorageKey, type FileStorage } from '../../src/platform/storage/storage.js';

export interface StorageUnderTest {
  storage: FileStorage;
  /** Everything the store holds, seen from outside it: files under its root, or the bucket's keys. */
  stored(): Promise<string[]>;
}

export interface ContractOptions {
  /** How much a replacing write sends before it fails: enough to have begun a multipart upload on S3. */
  failAfterBytes?: number;
  /** Per-test timeout for the cases that send `failAfterBytes`. */
  timeoutMs?: number;
}

export async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Keys no store may take: empty, escaping, not made by newStorageKey, too long. */
export const INVALID_KEYS = ['', '../outside', 'a/../../outside', '/etc/passwd', 'a//b', 'a/', 'a/./b', 'Upper/case', 'photo.jpg', 'a\\b', 'a b', 'nul\0byte', 'x'.repeat(600)];

/** Declares the contract's cases in the current describe; `store()` is read when each case runs. */
export function fileStorageContract(store: () => StorageUnderTest, options: ContractOptions = {}): void {
  const failAfter = options.failAfterBytes ?? 3;

  it('round-trips a buffer, seen from outside too', async () => {
    const { storage, stored } = store();
    const key = newStorageKey('uploads');
    const body = Buffer.from('hello, storage');
    expect(await storage.put(key, body)).toEqual({ size: body.length });
    expect(await storage.exists(key)).toBe(true);
    expect(await storage.read(key)).toEqual(body);
    expect(await collect(storage.get(key))).toEqual(body);
    expect(await stored()).toContain(key);
  });

  it('round-trips a stream and an async iterable', async () => {
    const { storage } = store();
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

  it('replaces an existing object', async () => {
    const { storage } = store();
    const key = newStorageKey();
    await storage.put(key, Buffer.from('first version, longer'));
    await storage.put(key, Readable.from([Buffer.from('sec'), Buffer.from('ond')]));
    expect((await storage.read(key)).toString()).toBe('second');
  });

  it('leaves nothing behind when the source stream fails midway', async () => {
    const { storage, stored } = store();
    const before = await stored();
    const key = newStorageKey();
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1024, 1));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.put(key, failing)).rejects.toThrow('client went away');
    expect(await storage.exists(key)).toBe(false);
    expect((await stored()).sort()).toEqual(before.sort());
  });

  it(
    'keeps the previous version when a replacing write fails, and nothing else',
    async () => {
      const { storage, stored } = store();
      const key = newStorageKey();
      await storage.put(key, Buffer.from('good'));
      const before = await stored();
      async function* failing(): AsyncIterable<Uint8Array> {
        yield new Uint8Array(failAfter).fill(1);
        throw new Error('boom');
      }
      await expect(storage.put(key, failing())).rejects.toThrow('boom');
      expect((await storage.read(key)).toString()).toBe('good');
      expect(await collect(storage.get(key))).toEqual(Buffer.from('good'));
      expect((await stored()).sort()).toEqual(before.sort());
    },
    options.timeoutMs,
  );

  it('deletes, and treats deleting a missing key as done', async () => {
    const { storage, stored } = store();
    const key = newStorageKey();
    await storage.put(key, Buffer.from('x'));
    await storage.delete(key);
    expect(await storage.exists(key)).toBe(false);
    expect(await stored()).not.toContain(key);
    await expect(storage.delete(key)).resolves.toBeUndefined();
    await expect(storage.delete('never/written')).resolves.toBeUndefined();
  });

  it('reports a missing key as ENOENT on read and on the get stream', async () => {
    const { storage } = store();
    await expect(storage.read('missing/key')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(collect(storage.get('missing/key'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await storage.exists('missing/key')).toBe(false);
  });

  it('refuses keys that could escape the store or are not service-made, touching nothing', async () => {
    const { storage, stored } = store();
    const before = await stored();
    for (const key of INVALID_KEYS) {
      await expect(storage.put(key, Buffer.from('x')), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.put(key, Readable.from([Buffer.from('x')])), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.read(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.exists(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.delete(key), key).rejects.toThrow(/Invalid storage key/);
      expect(() => storage.get(key), key).toThrow(/Invalid storage key/);
    }
    expect((await stored()).sort()).toEqual(before.sort());
  });
}
