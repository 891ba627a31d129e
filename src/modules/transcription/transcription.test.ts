// One-shot speech-to-text against a fake OpenAI-compatible transcription endpoint on loopback, with
// audio spoken on the machine by espeak-ng. Afterwards the data folder, the database and the log hold
// nothing of the audio: no file, no row, no name, no text.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { multipart } from '../../../test/support/documents.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { files } from '../files/files.tables.js';
import { history } from '../history/history.tables.js';
import { TRANSCRIPTIONS_PER_MINUTE } from './transcription.routes.js';
import { audioFormat } from './transcription.service.js';

const LIMIT = 200_000;
const SPOKEN = 'The pangolin parade starts at noon';
const HEARD = 'the pangolin parade starts at noon';
const NAME = 'secret-dictation-memo.wav';

let wav: Buffer;
let workDir: string;
let provider: Server;
let providerUrl: string;
const received: Array<{ authorization?: string; body: Buffer; contentType?: string }> = [];
let t: TestApp;
let bare: TestApp;
let token: string;
const log: string[] = [];
const logStream = new Writable({
  write(chunk, _encoding, done) {
    log.push(String(chunk));
    done();
  },
});

/** The bytes of the multipart part named `name` in a body the provider received. */
function partOf(body: Buffer, contentType: string, name: string): Buffer | undefined {
  const boundary = Buffer.from(`--${/boundary=(.+)$/.exec(contentType)![1]}`);
  let start = body.indexOf(boundary);
  while (start !== -1) {
    const next = body.indexOf(boundary, start + boundary.length);
    if (next === -1) return undefined;
    const part = body.subarray(start + boundary.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (part.subarray(0, split).toString().includes(`name="${name}"`)) return part.subarray(split + 4);
    start = next;
  }
  return undefined;
}

function dataFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const full = path.join(dir, entry);
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
  return walk(t.dataDir);
}

const fileRows = async () => (await t.platform.database.db.select({ n: count() }).from(files))[0]!.n;
const historyRows = async () => (await t.platform.database.db.select({ n: count() }).from(history))[0]!.n;

function transcribe(app: TestApp, content: Buffer | string, options: { token?: string; filename?: string; fields?: Record<string, string> } = {}) {
  const { payload, headers } = multipart(options.fields ?? {}, { filename: options.filename ?? NAME, content, contentType: 'audio/wav' });
  return app.app.inject({
    method: 'POST',
    url: '/api/ai/transcribe',
    headers: { ...headers, ...(options.token === '' ? {} : { 'x-access-token': options.token ?? token }) },
    payload,
  });
}

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'transcribe-'));
  const file = path.join(workDir, 'spoken.wav');
  execFileSync('espeak-ng', ['-w', file, SPOKEN]);
  wav = readFileSync(file);
  provider = createServer((request, response) => {
    const pieces: Buffer[] = [];
    request.on('data', (piece: Buffer) => pieces.push(piece));
    request.on('error', () => undefined);
    request.on('end', () => {
      const body = Buffer.concat(pieces);
      received.push({ authorization: request.headers.authorization, body, contentType: request.headers['content-type'] });
      const audio = partOf(body, request.headers['content-type'] ?? '', 'file');
      const same = request.url === '/v1/audio/transcriptions' && audio !== undefined && audio.equals(wav);
      response.writeHead(same ? 200 : 400, { 'content-type': 'application/json' });
      response.end(JSON.stringify(same ? { text: HEARD } : { error: { message: 'not the expected audio' } }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  t = await startTestApp({
    env: { TRANSCRIBE_BASE_URL: providerUrl, TRANSCRIBE_API_KEY: 'transcribe-key', TRANSCRIBE_MODEL: 'whisper-test', TRANSCRIBE_LIMIT: String(LIMIT) },
    logger: { level: 'debug', stream: logStream },
  });
  bare = await startTestApp();
  token = await signIn(t.app, (await buildUser(t.platform.database.db)).user.email);
}, 60_000);

afterAll(async () => {
  await Promise.all([t?.close(), bare?.close()]);
  if (provider.listening) await new Promise((resolve) => provider.close(resolve));
  rmSync(workDir, { recursive: true, force: true });
});

describe('POST /api/ai/transcribe', () => {
  it('streams the spoken WAV to the provider and answers its text, keeping nothing', async () => {
    const filesBefore = dataFiles();
    const rowsBefore = await fileRows();
    const historyBefore = await historyRows();
    const response = await transcribe(t, wav, { fields: { language: 'en' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, text: HEARD });
    expect(response.json().durationMs).toBeGreaterThanOrEqual(0);

    const sent = received.at(-1)!;
    expect(sent.authorization).toBe('Bearer transcribe-key');
    expect(partOf(sent.body, sent.contentType!, 'file')!.equals(wav)).toBe(true);
    expect(partOf(sent.body, sent.contentType!, 'model')!.toString()).toBe('whisper-test');
    expect(partOf(sent.body, sent.contentType!, 'language')!.toString()).toBe('en');
    expect(sent.body.includes(NAME)).toBe(false); // the person's file name does not travel either

    expect(dataFiles()).toEqual(filesBefore);
    expect(dataFiles().some((entry) => entry.includes('dictation'))).toBe(false);
    expect(await fileRows()).toBe(rowsBefore);
    expect(await historyRows()).toBe(historyBefore); // no history record either
    const written = log.join('');
    expect(written).toContain('/api/ai/transcribe'); // the log is captured...
    expect(written).not.toContain(NAME); // ...and holds neither the name
    expect(written.toLowerCase()).not.toContain('pangolin'); // nor the text
  });

  it('refuses a text file named .wav with 415, by its content', async () => {
    const before = received.length;
    const response = await transcribe(t, 'These are words, not a recording.', { filename: 'notes.wav' });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ success: false, code: 'UNSUPPORTED_AUDIO' });
    expect(received.length).toBe(before); // the provider never saw it
  });

  it('refuses audio above TRANSCRIBE_LIMIT with 413', async () => {
    const big = Buffer.concat([wav.subarray(0, 44), Buffer.alloc(LIMIT + 10_000)]);
    const response = await transcribe(t, big);
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ success: false, code: 'AUDIO_TOO_LARGE' });
  });

  it('refuses a bad language code with 400', async () => {
    const response = await transcribe(t, wav, { fields: { language: 'en"; drop' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'INVALID_LANGUAGE' });
  });

  it('answers a malformed multipart body or too many fields with 400', async () => {
    const cut = await t.app.inject({
      method: 'POST',
      url: '/api/ai/transcribe',
      headers: { 'content-type': 'multipart/form-data; boundary=b0und', 'x-access-token': token },
      payload: '--b0und\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF',
    });
    expect(cut.statusCode).toBe(400);
    expect(cut.json()).toMatchObject({ success: false });
    const fields = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, 'x']));
    const many = await transcribe(t, wav, { fields });
    expect(many.statusCode).toBe(400);
    expect(many.json()).toMatchObject({ success: false, code: 'INVALID_MULTIPART' });
  });

  it('answers 401 without a session', async () => {
    const response = await transcribe(t, wav, { token: '' });
    expect(response.statusCode).toBe(401);
  });

  it('answers 503 TRANSCRIBE_NOT_CONFIGURED without a provider', async () => {
    const person = await signIn(bare.app, (await buildUser(bare.platform.database.db)).user.email);
    const response = await transcribe(bare, wav, { token: person });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ success: false, code: 'TRANSCRIBE_NOT_CONFIGURED' });
  });

  it('takes the same request over a real listener', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'text/plain' }), NAME);
    const response = await fetch(`${base}/api/ai/transcribe`, { method: 'POST', headers: { 'x-access-token': token }, body: form });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, text: HEARD });
    const text = new FormData();
    text.append('file', new Blob(['words, words'], { type: 'audio/wav' }), 'fake.wav');
    const refused = await fetch(`${base}/api/ai/transcribe`, { method: 'POST', headers: { 'x-access-token': token }, body: text });
    expect(refused.status).toBe(415);
    const big = new FormData();
    big.append('file', new Blob([new Uint8Array(wav.subarray(0, 44)), new Uint8Array(LIMIT * 3)]), 'long.wav');
    const tooBig = await fetch(`${base}/api/ai/transcribe`, { method: 'POST', headers: { 'x-access-token': token }, body: big });
    expect(tooBig.status).toBe(413);
  });

  it(`limits each person to ${TRANSCRIPTIONS_PER_MINUTE} a minute, others unaffected`, async () => {
    const busy = await signIn(t.app, (await buildUser(t.platform.database.db)).user.email);
    const statuses: number[] = [];
    for (let i = 0; i <= TRANSCRIPTIONS_PER_MINUTE; i++) statuses.push((await transcribe(t, 'not audio', { token: busy })).statusCode);
    expect(statuses.slice(0, TRANSCRIPTIONS_PER_MINUTE).every((status) => status === 415)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    expect((await transcribe(t, 'not audio')).statusCode).toBe(415); // another person still gets through
  });

  it('answers 502 TRANSCRIBE_FAILED when the provider refuses or is down', async () => {
    const refused = await transcribe(t, Buffer.concat([wav, Buffer.from([0])]));
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toMatchObject({ success: false, code: 'TRANSCRIBE_FAILED' });
    provider.closeAllConnections();
    await new Promise((resolve) => provider.close(resolve));
    const down = await transcribe(t, wav);
    expect(down.statusCode).toBe(502);
    expect(down.json()).toMatchObject({ success: false, code: 'TRANSCRIBE_FAILED' });
    expect(log.join('')).not.toContain(NAME);
  });
});

describe('audio recognised by its first bytes', () => {
  const bytes = (...values: Array<number | string>) =>
    Buffer.concat(values.map((value) => (typeof value === 'string' ? Buffer.from(value, 'latin1') : Buffer.from([value]))));
  it.each([
    ['wav', bytes('RIFF', 0, 0, 0, 0, 'WAVEfmt ')],
    ['mp3', bytes('ID3', 4, 0, 0)],
    ['mp3', bytes(0xff, 0xfb, 0x90, 0x64)],
    ['ogg', bytes('OggS', 0, 2)],
    ['webm', bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f)],
    ['m4a', bytes(0, 0, 0, 0x20, 'ftypM4A ')],
    ['flac', bytes('fLaC', 0, 0, 0, 0x22)],
  ])('%s', (format, head) => expect(audioFormat(head)).toBe(format));
  it.each([['text', bytes('hello world, not audio')], ['RIFF but AVI', bytes('RIFF', 0, 0, 0, 0, 'AVI LIST')], ['PDF', bytes('%PDF-1.7')], ['short', bytes(0xff)]])(
    'not %s',
    (_name, head) => expect(audioFormat(head)).toBeUndefined(),
  );
});
