// Uploads into the object store through a real service process, bad input first: what a person is
// told is what the local store's tests (src/modules/files/bad-input.test.ts) expect, and nothing is
// left in the bucket. The process uses this run's database (a new PostgreSQL database with Redis, or
// its own embedded one) and the S3 peer; it creates its first admin, who uploads.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { multipart } from './support/documents.js';
import { signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { startS3, type TestS3 } from './support/s3.js';

const LIMIT = 4096;
const scaled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe('uploads into the S3 store through the service', () => {
  let s3: TestS3;
  let peer: S3Client;
  let database: TestDatabase | undefined;
  let dataDir: string;
  let service: ServiceProcess;
  let token: string;

  const objects = async () => ((await peer.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key!);
  const post = (contentType: string, payload: Buffer) =>
    fetch(`${service.url}/api/user/files`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-access-token': token },
      body: new Uint8Array(payload),
    });

  beforeAll(async () => {
    s3 = await startS3();
    peer = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
    dataDir = await mkdtemp(path.join(tmpdir(), 'dt-s3-uploads-'));
    if (scaled) database = await openTestDatabase();
    const env = {
      ...s3.env,
      DATA_DIR: dataDir,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      ADMIN_EMAIL: 'admin@example.org',
      ADMIN_PASSWORD: 'a long password',
      UPLOAD_LIMIT: String(LIMIT),
      ...(database ? { DATABASE_URL: database.url!, REDIS_URL: process.env.TEST_REDIS_URL! } : {}),
    };
    service = await startProcess(SERVICE_MAIN, [database ? 'api' : 'all'], env);
    token = await signInAt(service.url, 'admin@example.org', 'a long password');
  }, 120_000);

  afterAll(async () => {
    await stopProcess(service);
    peer?.destroy();
    await s3?.close();
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a file over UPLOAD_LIMIT with 413, an empty one with 400, and keeps neither', async () => {
    const big = multipart({}, { filename: 'big.txt', content: 'a'.repeat(LIMIT + 10) });
    const tooLarge = await post(big.headers['content-type'], big.payload);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ success: false, code: 'FILE_TOO_LARGE', message: expect.stringMatching(/larger than the upload limit/) });

    const empty = multipart({}, { filename: 'empty.txt', content: '' });
    const refused = await post(empty.headers['content-type'], empty.payload);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ success: false, code: 'EMPTY_FILE' });

    expect(await objects()).toEqual([]);
  });

  it('refuses a multipart body cut off inside the file with 400 INVALID_MULTIPART, and stores nothing', async () => {
    const good = multipart({}, { filename: 'a.txt', content: 'hello, bucket' });
    const cut = good.payload.subarray(0, good.payload.indexOf('hello') + 3);
    const response = await post(good.headers['content-type'], cut);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ success: false, code: 'INVALID_MULTIPART' });
    expect(await objects()).toEqual([]);
  });

  it('refuses a file whose content is not its type with 415, and stores nothing', async () => {
    const fake = multipart({}, { filename: 'paper.pdf', content: 'not a pdf at all' });
    const response = await post(fake.headers['content-type'], fake.payload);
    expect(response.status).toBe(415);
    expect(await objects()).toEqual([]);
  });

  it('stores a good file in the bucket, serves its bytes, and removes it with the record', async () => {
    const content = Buffer.from(`# Notes\n\n${randomBytes(600).toString('hex')}\n`);
    const good = multipart({}, { filename: 'notes.md', content });
    const created = await post(good.headers['content-type'], good.payload);
    expect(created.status).toBe(201);
    const { uploadId } = (await created.json()) as { uploadId: string };
    expect((await objects()).filter((key) => key.startsWith('files/'))).toHaveLength(1);

    const download = await fetch(`${service.url}/api/user/files/${uploadId}/download`, { headers: { 'x-access-token': token } });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true);

    const removed = await fetch(`${service.url}/api/user/files/${uploadId}`, { method: 'DELETE', headers: { 'x-access-token': token } });
    expect(removed.status).toBe(200);
    expect(await objects()).toEqual([]);
    const gone = await fetch(`${service.url}/api/user/files/${uploadId}/download`, { headers: { 'x-access-token': token } });
    expect(gone.status).toBe(404);

    // Files went to the bucket only: the process's folder holds its embedded database at most.
    expect((await readdir(dataDir)).filter((entry) => entry !== 'pglite')).toEqual([]);
  });
});
