// The scaled shape's file store against a real S3 protocol peer on loopback (s3rver): the FileStorage
// contract every store keeps (test/support/storage-contract.ts), read from outside through the peer,
// and what only this store does (multipart uploads, partial reads, a bucket that cannot be used).
// s3rver implements neither AbortMultipartUpload nor ListMultipartUploads: that a failed multipart
// upload's parts are removed is the SDK's (lib-storage) behaviour on a real store, not checked here.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createS3Storage, type S3Storage } from '../src/platform/storage/s3-storage.js';
import { newStorageKey } from '../src/platform/storage/storage.js';
import { freePort, serviceArgs } from './support/processes.js';
import { startS3, type TestS3 } from './support/s3.js';
import { collect, fileStorageContract } from './support/storage-contract.js';

describe('createS3Storage on an S3 peer', () => {
  let s3: TestS3;
  let storage: S3Storage;
  let peer: S3Client;

  const listKeys = async () =>
    ((await peer.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key ?? '');

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

  // A replacing write fails after 6 MiB: more than a part, so its multipart upload has begun.
  fileStorageContract(() => ({ storage, stored: listKeys }), { failAfterBytes: 6 * 1024 * 1024, timeoutMs: 60_000 });

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
      const child = spawn(process.execPath, serviceArgs('api'), {
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
