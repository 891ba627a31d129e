// The scaled shape's file store against a real S3 protocol peer on loopback (s3rver): the same
// contract as the local store (src/platform/storage/storage.test.ts), read from outside through the
// peer where it matters (a failed upload leaves no object under its key).
// s3rver implements neither AbortMultipartUpload nor ListMultipartUploads: that a failed multipart
// upload's parts are removed is the SDK's (lib-storage) behaviour on a real store, not checked here.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createS3Storage, type S3Storage } from '../src/platform/storage/s3-storage.js';
import { newStorageKey } from '../src/platform/storage/storage.js';
import { freePort } from './support/processes.js';
import { startS3, type TestS3 } from './support/s3.js';

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe('createS3Storage on an S3 peer', () => {
  let s3: TestS3;
  let storage: S3Storage;
  let peer: S3Client;

  const listKeys = async () =>
    ((await peer.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key);

  beforeAll(async () => {
    s3 = await startS3();
    storage = createS3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: s3.credentials });
    peer = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
  });

  afterAll(async () => {
    peer?.destroy();
    await storage?.close();
    await s3?.close();
  });

  it('round-trips a buffer', async () => {
    const key = newStorageKey('uploads');
    const body = Buffer.from('hello, object storage');
    expect(await storage.put(key, body)).toEqual({ size: body.length });
    expect(await storage.exists(key)).toBe(true);
    expect(await storage.read(key)).toEqual(body);
    expect(await collect(storage.get(key))).toEqual(body);
    expect(await listKeys()).toContain(key);
  });

  it('round-trips a stream and an async iterable', async () => {
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(4096, i));
    const expected = Buffer.concat(chunks);

    const streamKey = newStorageKey();
    expect(await storage.put(streamKey, Readable.from(chunks))).toEqual({ size: expected.length });
    expect((await storage.read(streamKey)).equals(expected)).toBe(true);

    const iterableKey = newStorageKey();
    async function* generate(): AsyncIterable<Uint8Array> {
      for (const chunk of chunks) yield new Uint8Array(chunk);
    }
    expect(await storage.put(iterableKey, generate())).toEqual({ size: expected.length });
    expect((await collect(storage.get(iterableKey))).equals(expected)).toBe(true);
  });

  it('sends a stream larger than one part as a multipart upload, and reads it back whole', async () => {
    // 12 MiB in 64 KiB pieces: three parts of 5, 5 and 2 MiB.
    const piece = 64 * 1024;
    const total = 12 * 1024 * 1024;
    const source = randomBytes(total);
    async function* pieces(): AsyncIterable<Uint8Array> {
      for (let offset = 0; offset < total; offset += piece) yield source.subarray(offset, offset + piece);
    }
    const key = newStorageKey('files');
    expect(await storage.put(key, pieces())).toEqual({ size: total });
    const back = await collect(storage.get(key));
    expect(back.length).toBe(total);
    expect(back.equals(source)).toBe(true);
  }, 60_000);

  it('replaces an existing object', async () => {
    const key = newStorageKey();
    await storage.put(key, Buffer.from('first version, longer'));
    await storage.put(key, Readable.from([Buffer.from('sec'), Buffer.from('ond')]));
    expect((await storage.read(key)).toString()).toBe('second');
  });

  it('leaves no object behind when the source stream fails midway, and keeps a previous version', async () => {
    const fresh = newStorageKey();
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1024, 1));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.put(fresh, failing)).rejects.toThrow('client went away');
    expect(await storage.exists(fresh)).toBe(false);
    expect(await listKeys()).not.toContain(fresh);

    const replaced = newStorageKey();
    await storage.put(replaced, Buffer.from('good'));
    async function* failsAfterAPart(): AsyncIterable<Uint8Array> {
      yield randomBytes(6 * 1024 * 1024); // more than a part: the multipart upload has begun
      throw new Error('boom');
    }
    await expect(storage.put(replaced, failsAfterAPart())).rejects.toThrow('boom');
    expect((await storage.read(replaced)).toString()).toBe('good');
    expect(await collect(storage.get(replaced))).toEqual(Buffer.from('good'));
  }, 60_000);

  it('deletes, and treats deleting a missing key as done', async () => {
    const key = newStorageKey();
    await storage.put(key, Buffer.from('x'));
    await storage.delete(key);
    expect(await storage.exists(key)).toBe(false);
    expect(await listKeys()).not.toContain(key);
    await expect(storage.delete(key)).resolves.toBeUndefined();
    await expect(storage.delete('never/written')).resolves.toBeUndefined();
  });

  it('reports a missing key as ENOENT on read and on the get stream, as the local store does', async () => {
    await expect(storage.read('missing/key')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(collect(storage.get('missing/key'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await storage.exists('missing/key')).toBe(false);
  });

  it('stops reading when the reader stops: a stream read in part and destroyed, then the object read again', async () => {
    const key = newStorageKey();
    const body = randomBytes(2 * 1024 * 1024);
    await storage.put(key, body);
    const stream = storage.get(key);
    for await (const chunk of stream) {
      expect((chunk as Buffer).length).toBeGreaterThan(0);
      break; // destroys the stream
    }
    expect(stream.destroyed).toBe(true);
    expect((await storage.read(key)).equals(body)).toBe(true);
  });

  it('refuses keys that are not service-made, before any request', async () => {
    const before = await listKeys();
    const bad = ['', '../outside', 'a/../../outside', '/etc/passwd', 'a//b', 'a/', 'a/./b', 'Upper/case', 'photo.jpg', 'a\\b', 'a b', 'nul\0byte', 'x'.repeat(600)];
    for (const key of bad) {
      await expect(storage.put(key, Buffer.from('x')), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.put(key, Readable.from([Buffer.from('x')])), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.read(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.exists(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.delete(key), key).rejects.toThrow(/Invalid storage key/);
      expect(() => storage.get(key), key).toThrow(/Invalid storage key/);
    }
    expect(await listKeys()).toEqual(before);
  });

  it('surfaces a store that cannot be reached or a bucket that does not exist as errors, not as missing files', async () => {
    const noBucket = createS3Storage({ bucket: 'no-such-bucket', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: s3.credentials });
    try {
      await expect(noBucket.read('a/key')).rejects.not.toMatchObject({ code: 'ENOENT' });
      await expect(collect(noBucket.get('a/key'))).rejects.not.toMatchObject({ code: 'ENOENT' });
      await expect(noBucket.put('a/key', Buffer.from('x'))).rejects.toThrow();
    } finally {
      await noBucket.close();
    }
  });

  it('checks at start that the bucket can be used: yes for the bucket, no for a missing bucket or a store that does not answer', async () => {
    await expect(storage.check()).resolves.toBeUndefined();
    const stores = [
      createS3Storage({ bucket: 'no-such-bucket', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: s3.credentials }),
      createS3Storage({ bucket: s3.bucket, endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1', forcePathStyle: true, credentials: s3.credentials }),
    ];
    try {
      await expect(stores[0].check()).rejects.toMatchObject({ name: 'NoSuchBucket' });
      await expect(stores[1].check()).rejects.toThrow(); // nothing listens there
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it('a service process whose bucket cannot be used refuses to start, naming it, and writes nothing', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'dt-s3-refused-'));
    try {
      // Asynchronously: the S3 peer answers from this process.
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api'], {
        env: {
          ...process.env,
          ...s3.env,
          FILES_S3_BUCKET: 'no-such-bucket',
          DATA_DIR: dataDir,
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          JWT_SECRET: randomBytes(32).toString('hex'),
          ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (piece: Buffer) => (stderr += piece.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const [status] = (await once(child, 'exit')) as [number | null];
      clearTimeout(timer);
      expect(status).toBe(1);
      expect(stderr).toContain(`Failed to start: FILES_S3_BUCKET "no-such-bucket" at ${s3.endpoint} cannot be used (NoSuchBucket:`);
      expect(await readdir(dataDir)).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('FILES_S3_* configuration', () => {
  const base = { DATA_DIR: '/nonexistent-data-dir', JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: 'ab'.repeat(32) };

  it('is off unless FILES_S3_BUCKET is set: files stay in DATA_DIR/files', () => {
    expect(loadConfig(base).filesS3).toBeUndefined();
  });

  it('reads the bucket, endpoint, region and path style', () => {
    const config = loadConfig({ ...base, FILES_S3_BUCKET: 'dt-files', FILES_S3_ENDPOINT: 'http://minio:9000', FILES_S3_REGION: 'eu-west-1', FILES_S3_FORCE_PATH_STYLE: 'true' });
    expect(config.filesS3).toEqual({ bucket: 'dt-files', endpoint: 'http://minio:9000', region: 'eu-west-1', forcePathStyle: true });
    expect(loadConfig({ ...base, FILES_S3_BUCKET: 'dt-files', AWS_REGION: 'ap-south-1' }).filesS3).toEqual({ bucket: 'dt-files', endpoint: undefined, region: 'ap-south-1', forcePathStyle: false });
    expect(loadConfig({ ...base, FILES_S3_BUCKET: 'dt-files' }).filesS3?.region).toBe('us-east-1');
  });

  it('stops the process with a reason naming the variable', () => {
    expect(() => loadConfig({ ...base, FILES_S3_BUCKET: 'Not_A_Bucket' })).toThrow(/^Invalid configuration: FILES_S3_BUCKET must be a bucket name/);
    expect(() => loadConfig({ ...base, FILES_S3_BUCKET: 'dt-files', FILES_S3_ENDPOINT: 'minio:9000' })).toThrow('Invalid configuration: FILES_S3_ENDPOINT must be an http:// or https:// URL');
    expect(() => loadConfig({ ...base, FILES_S3_BUCKET: 'dt-files', FILES_S3_FORCE_PATH_STYLE: 'yes' })).toThrow(/^Invalid configuration: FILES_S3_FORCE_PATH_STYLE must be true or false/);
    expect(() => loadConfig({ ...base, FILES_S3_ENDPOINT: 'http://minio:9000' })).toThrow(
      'Invalid configuration: FILES_S3_BUCKET is required when FILES_S3_ENDPOINT is set',
    );
  });
});
