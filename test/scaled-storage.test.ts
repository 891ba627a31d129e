// The scaled shape shares no disk: an API process, a worker and a second API process, each
// with its own DATA_DIR, on one PostgreSQL database, one Redis and one S3 bucket (s3rver on loopback).
// A file uploaded on the first API is ingested by the worker, found by search, and downloaded (alone
// and in a collection's ZIP) from the second API; a personal-data export is built by the worker and
// downloaded from the second API. No process writes anything into its own DATA_DIR.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { makePdf, multipart } from './support/documents.js';
import { buildUser } from './support/factories.js';
import { freePort, signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN, serviceArgs } from './support/processes.js';
import { startS3, type TestS3 } from './support/s3.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/** A worker serves no HTTP: it is up once it logs that it started. */
async function startWorker(env: Record<string, string>, timeoutMs = 120_000): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, serviceArgs('worker'), {
    env: { ...process.env, ...env, LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let started = false;
  child.stdout!.on('data', (piece: Buffer) => void (started ||= piece.toString().includes('"msg":"service started"')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the worker exited with ${child.exitCode}`);
    if (started) return { child, url: '', exited };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('the worker did not start');
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

describe.runIf(enabled)('the scaled shape: API processes and a worker that share no folder, files in an S3 bucket', () => {
  let database: TestDatabase;
  let s3: TestS3;
  let smtp: TestSmtpServer;
  let peer: S3Client;
  const dataDirs: string[] = [];
  let api1: ServiceProcess;
  let api2: ServiceProcess;
  let worker: ServiceProcess;
  let token: string;
  let email: string;

  const word = `zebracorn${randomBytes(4).toString('hex')}`;
  const markdown = { filename: 'moon-notes.md', content: Buffer.from(`# Moon\n\nThe ${word} grazes on the quiet moon.\n${randomBytes(32).toString('hex')}\n`) };
  let pdf: { filename: string; content: Buffer };
  const ids: Record<string, string> = {};

  const call = async (base: string, route: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const json = init.body !== undefined && !Buffer.isBuffer(init.body);
    const response = await fetch(`${base}${route}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { 'x-access-token': token, ...(json ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body === undefined ? undefined : json ? JSON.stringify(init.body) : new Uint8Array(init.body as Buffer),
    });
    return response;
  };
  const bucketKeys = async () =>
    ((await peer.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key!);

  async function upload(file: { filename: string; content: Buffer }, fields: Record<string, string>): Promise<string> {
    const { payload, headers } = multipart(fields, file);
    const response = await call(api1.url, '/api/user/files', { body: payload, headers });
    expect(response.status).toBe(201);
    return ((await response.json()) as { uploadId: string }).uploadId;
  }

  async function settled(id: string): Promise<{ status: string; chunkCount: number; error?: string | null }> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const record = (await (await call(api2.url, `/api/user/files/${id}`)).json()).data;
      if (record.status !== 'processing' || Date.now() > deadline) return record;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  beforeAll(async () => {
    [database, s3, smtp] = await Promise.all([openTestDatabase(), startS3(), startSmtpServer()]);
    peer = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
    for (let i = 0; i < 3; i++) dataDirs.push(await mkdtemp(path.join(tmpdir(), `dt-scaled-${i}-`)));
    // What every process is given alike; each its own DATA_DIR.
    const shared = {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      SMTP_URL: smtp.url,
      ...s3.env,
    };
    [api1, worker, api2] = await Promise.all([
      startProcess(SERVICE_MAIN, ['api'], { ...shared, DATA_DIR: dataDirs[0] }),
      startWorker({ ...shared, DATA_DIR: dataDirs[1] }),
      startProcess(SERVICE_MAIN, ['api'], { ...shared, DATA_DIR: dataDirs[2] }),
    ]);
    const person = await buildUser(database.db);
    email = person.user.email;
    token = await signInAt(api1.url, email, person.password);
    pdf = { filename: 'reading.pdf', content: await makePdf([['Collected reading'], [`The ${word} appears on page two.`]]) };
  }, 240_000);

  afterAll(async () => {
    await Promise.all([stopProcess(api1), stopProcess(api2), stopProcess(worker)]);
    peer?.destroy();
    await Promise.all([database?.close(), s3?.close(), smtp?.close()]);
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  });

  it('ingests on the worker what was uploaded on one API, and another API finds and serves it', async () => {
    const created = await call(api1.url, '/api/user/files/collections', { body: { name: 'Moon pack' } });
    expect(created.status).toBe(201);
    ids.collection = (await created.json()).data._id;

    ids.markdown = await upload(markdown, { collectionId: ids.collection });
    ids.pdf = await upload(pdf, { collectionId: ids.collection });
    // The stored bytes are in the bucket, not in the receiving process's folder.
    expect((await bucketKeys()).filter((key) => key.startsWith('files/'))).toHaveLength(2);

    for (const id of [ids.markdown, ids.pdf]) {
      const record = await settled(id);
      expect(record, id).toMatchObject({ status: 'ready' });
      expect(record.chunkCount).toBeGreaterThan(0);
    }

    const search = await call(api2.url, '/api/user/rag/search', { body: { query: word } });
    expect(search.status).toBe(200);
    const found = ((await search.json()).results as Array<{ uploadId: string; chunkText: string }>).map((result) => result.uploadId);
    expect(found).toContain(ids.markdown);
    expect(found).toContain(ids.pdf);

    for (const [id, file] of [[ids.markdown, markdown], [ids.pdf, pdf]] as const) {
      const download = await call(api2.url, `/api/user/files/${id}/download`);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-disposition')).toContain(file.filename);
      expect(Buffer.from(await download.arrayBuffer()).equals(file.content)).toBe(true);
    }
  }, 180_000);

  it("serves a collection's ZIP from the second API, each file's bytes as uploaded", async () => {
    const response = await call(api2.url, `/api/user/files/collections/${ids.collection}/zip`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/zip');
    const entries = unzipSync(new Uint8Array(await response.arrayBuffer()));
    expect(Object.keys(entries).sort()).toEqual(['moon-notes.md', 'reading.pdf']);
    expect(Buffer.from(entries['moon-notes.md']).equals(markdown.content)).toBe(true);
    expect(Buffer.from(entries['reading.pdf']).equals(pdf.content)).toBe(true);
  });

  it('builds a personal-data export on the worker, mailed, and downloaded from the second API', async () => {
    const started = await call(api1.url, '/api/user/data/export', { body: {} });
    expect(started.status).toBe(202);
    const { exportId } = await started.json();

    const mail = await smtp.next((m) => m.to.includes(email) && /export is ready/.test(m.subject), 90_000);
    const status = await (await call(api2.url, `/api/user/data/export/${exportId}`)).json();
    expect(status).toMatchObject({ status: 'ready', progress: 100, expired: false });
    const link = new URL(/https?:\/\/\S+\/download\?token=\S+/.exec(mail.text)![0]);
    expect(link.pathname).toBe(`/api/user/data/export/${exportId}/download`);

    const download = await fetch(`${api2.url}${link.pathname}${link.search}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/zip');
    const entries = unzipSync(new Uint8Array(await download.arrayBuffer()));
    expect(Buffer.from(entries['files/moon-notes.md']).equals(markdown.content)).toBe(true);
    expect(Buffer.from(entries['files/reading.pdf']).equals(pdf.content)).toBe(true);
    const listed = JSON.parse(strFromU8(entries['files.json'])) as Array<{ _id: string }>;
    expect(listed.map((file) => file._id).sort()).toEqual([ids.markdown, ids.pdf].sort());
    // The archive is an object of the bucket too.
    expect((await bucketKeys()).some((key) => !key.startsWith('files/'))).toBe(true);
  }, 120_000);

  it('answers 404 for a file whose stored object is gone, and a removed file leaves the bucket', async () => {
    const gone = await upload({ filename: 'gone.md', content: Buffer.from(`# Gone\n\n${word} soon gone\n`) }, {});
    expect((await settled(gone)).status).toBe('ready');
    const keysBefore = await bucketKeys();

    // Removed by hand from the store: the record stays, its download is a 404 in the spec's shape.
    const [record] = (await database.executeSql('select storage_key from files where id = $1', [gone])).rows as Array<{ storage_key: string }>;
    await peer.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: record.storage_key }));
    const missing = await call(api2.url, `/api/user/files/${gone}/download`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ success: false, message: 'File not found' });

    // Removed by its owner on one API: the object goes from the bucket, and the other API answers 404.
    const pdfKey = ((await database.executeSql('select storage_key from files where id = $1', [ids.pdf])).rows[0] as { storage_key: string }).storage_key;
    expect(keysBefore).toContain(pdfKey);
    expect((await call(api1.url, `/api/user/files/${ids.pdf}`, { method: 'DELETE' })).status).toBe(200);
    expect(await bucketKeys()).not.toContain(pdfKey);
    expect((await call(api2.url, `/api/user/files/${ids.pdf}/download`)).status).toBe(404);
  }, 120_000);

  it("leaves nothing in any process's own DATA_DIR", async () => {
    for (const dir of dataDirs) expect(await filesUnder(dir), dir).toEqual([]);
  });
});
