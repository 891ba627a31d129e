// One-shot speech-to-text in the shape with an object store: a service process whose files go to an
// S3 bucket (s3rver on loopback) transcribes espeak-ng's spoken WAV through a fake transcription
// endpoint that checks the bytes it received, refuses a text file named .wav (415) and audio above
// TRANSCRIBE_LIMIT (413), and afterwards neither the bucket nor the data folder holds anything of it.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInAt, startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { startS3, type TestS3 } from './support/s3.js';

const LIMIT = 200_000;
const SPOKEN = 'Remember the flamingo budget meeting';
const NAME = 'flamingo-memo.wav';

describe('transcription with an object store', () => {
  let s3: TestS3;
  let peer: S3Client;
  let workDir: string;
  let dataDir: string;
  let wav: Buffer;
  let provider: Server;
  let service: ServiceProcess;
  let token: string;
  /** Whether each upload the fake endpoint received was the spoken WAV, byte for byte. */
  const matched: boolean[] = [];

  const objects = async () => ((await peer.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key!);
  const dataFiles = async () => (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  const transcribe = (content: Uint8Array<ArrayBuffer>, filename = NAME) => {
    const form = new FormData();
    form.append('file', new Blob([content], { type: 'audio/wav' }), filename);
    return fetch(`${service.url}/api/ai/transcribe`, { method: 'POST', headers: { 'x-access-token': token }, body: form });
  };

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'dt-transcribe-s3-'));
    dataDir = path.join(workDir, 'data');
    const file = path.join(workDir, 'spoken.wav');
    execFileSync('espeak-ng', ['-w', file, SPOKEN]);
    wav = await readFile(file);
    provider = createServer((request, response) => {
      const pieces: Buffer[] = [];
      request.on('data', (piece: Buffer) => pieces.push(piece));
      request.on('end', () => {
        const body = Buffer.concat(pieces);
        const same = body.includes(wav) && body.length < wav.length + 2_000;
        matched.push(same);
        response.writeHead(same ? 200 : 400, { 'content-type': 'application/json' });
        response.end(JSON.stringify(same ? { text: SPOKEN.toLowerCase() } : { error: { message: 'not the expected audio' } }));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    s3 = await startS3();
    peer = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
    service = await startProcess(SERVICE_MAIN, [], {
      ...s3.env,
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      REDIS_URL: '',
      ADMIN_EMAIL: 'admin@example.org',
      ADMIN_PASSWORD: 'a long password',
      TRANSCRIBE_BASE_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`,
      TRANSCRIBE_LIMIT: String(LIMIT),
    });
    token = await signInAt(service.url, 'admin@example.org', 'a long password');
  }, 120_000);

  afterAll(async () => {
    await stopProcess(service);
    peer?.destroy();
    await s3?.close();
    if (provider?.listening) await new Promise((resolve) => provider.close(resolve));
    await rm(workDir, { recursive: true, force: true });
  });

  it('transcribes, refuses 415 and 413, and keeps nothing in the bucket or the data folder', async () => {
    const filesBefore = await dataFiles();
    const heard = await transcribe(new Uint8Array(wav));
    expect(heard.status).toBe(200);
    expect(await heard.json()).toMatchObject({ success: true, text: SPOKEN.toLowerCase() });
    expect(matched).toEqual([true]);

    const text = await transcribe(new TextEncoder().encode('Remember the flamingo budget meeting, typed.'), 'typed.wav');
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ success: false, code: 'UNSUPPORTED_AUDIO' });
    const big = new Uint8Array(LIMIT + 50_000);
    big.set(wav.subarray(0, 44));
    const tooBig = await transcribe(big);
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ success: false, code: 'AUDIO_TOO_LARGE' });

    expect(await objects()).toEqual([]);
    const after = await dataFiles();
    // The embedded database's own files change; nothing new is named after the audio or holds its bytes.
    expect(after.filter((entry) => !filesBefore.includes(entry) && !entry.includes(`${path.sep}pglite`))).toEqual([]);
    for (const entry of after) {
      const content = await readFile(entry);
      expect(content.includes(wav.subarray(44, 4_044)), entry).toBe(false);
      expect(content.includes(Buffer.from(NAME)), entry).toBe(false);
    }
  }, 60_000);
});
