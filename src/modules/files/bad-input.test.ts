// Bad input to the vault: each case gets a clear refusal or an `error` status with the reason, and
// nothing else is affected (a good file uploaded first stays ready and searchable, storage holds no strays).
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { makeDocx, makePdf, makeZipBombDocx, multipart } from '../../../test/support/documents.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { getFile, search, uploadAndIngest, uploadFile } from '../../../test/support/files.js';

const LIMIT = 600_000;
let t: TestApp;
let token: string;
let good: { _id: string };

beforeAll(async () => {
  t = await startTestApp({ workers: true, env: { UPLOAD_LIMIT: String(LIMIT) } });
  const person = await buildUser(t.platform.database.db);
  token = await signIn(t.app, person.user.email);
  good = await uploadAndIngest(t, token, { filename: 'good.txt', content: 'A healthy file about the pangolin parade.' });
});
afterAll(() => t.close());

function storedFiles(): string[] {
  const root = path.join(t.dataDir, 'files');
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
  try {
    return walk(root);
  } catch {
    return [];
  }
}

async function expectRefused(file: Parameters<typeof uploadFile>[2], status: number, code: string, message: RegExp) {
  const before = storedFiles().length;
  const response = await uploadFile(t, token, file);
  expect(response.statusCode).toBe(status);
  expect(response.json()).toMatchObject({ success: false, code });
  expect(response.json().message).toMatch(message);
  expect(storedFiles().length).toBe(before); // nothing left in storage
}

async function expectErrorStatus(file: Parameters<typeof uploadFile>[2], reason: RegExp) {
  const record = await uploadAndIngest(t, token, file);
  expect(record.status).toBe('error');
  expect(record.error).toMatch(reason);
  expect(record.chunkCount).toBe(0);
}

describe('refused at upload', () => {
  it('an empty file', () => expectRefused({ filename: 'empty.txt', content: '' }, 400, 'EMPTY_FILE', /empty/));

  it('a file over the limit', () =>
    expectRefused({ filename: 'big.txt', content: 'a'.repeat(LIMIT + 10) }, 413, 'FILE_TOO_LARGE', /larger than the upload limit/));

  it('a .txt that is a ZIP', () =>
    expectRefused({ filename: 'notes.txt', content: makeDocx(['zip inside']) }, 415, 'TYPE_MISMATCH', /does not match its type \(\.txt\).*ZIP/));

  it('a .pdf that is not a PDF', () =>
    expectRefused({ filename: 'fake.pdf', content: 'just words' }, 415, 'TYPE_MISMATCH', /does not match its type \(\.pdf\)/));

  it('a .docx that is not a ZIP', () =>
    expectRefused({ filename: 'fake.docx', content: 'just words' }, 415, 'TYPE_MISMATCH', /\.docx/));

  it('an unsupported type', () =>
    expectRefused({ filename: 'tool.exe', content: Buffer.from([0x4d, 0x5a, 0, 0]) }, 415, 'UNSUPPORTED_TYPE', /Unsupported file type \(\.exe\)/));

  it('a request without a file, and one with two files', async () => {
    const none = multipart({ confidential: 'true' });
    const noFile = await t.app.inject({ method: 'POST', url: '/api/user/files', headers: { ...none.headers, 'x-access-token': token }, payload: none.payload });
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json().code).toBe('NO_FILE');
    const two = multipart({}, { filename: 'a.txt', content: 'a' }, { filename: 'b.txt', content: 'b' });
    const twoFiles = await t.app.inject({ method: 'POST', url: '/api/user/files', headers: { ...two.headers, 'x-access-token': token }, payload: two.payload });
    expect(twoFiles.statusCode).toBeGreaterThanOrEqual(400);
    expect(twoFiles.statusCode).toBeLessThan(500);
    expect(twoFiles.json().success).toBe(false);
  });

  it('a malformed multipart body (no boundary, a wrong one, a part left unclosed): 400, nothing stored', async () => {
    const good = multipart({}, { filename: 'a.txt', content: 'hello' });
    const boundary = good.headers['content-type'].split('boundary=')[1];
    const cases: Array<[string, Buffer]> = [
      ['multipart/form-data', good.payload],
      ['multipart/form-data; boundary=not-the-one', good.payload],
      [good.headers['content-type'], good.payload.subarray(0, good.payload.indexOf('hello') + 3)],
      [`multipart/form-data; boundary=${boundary}`, Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"`)],
    ];
    for (const [contentType, payload] of cases) {
      const before = storedFiles().length;
      const response = await t.app.inject({ method: 'POST', url: '/api/user/files', headers: { 'content-type': contentType, 'x-access-token': token }, payload });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        success: false,
        code: 'INVALID_MULTIPART',
        message: 'The multipart body is malformed (boundary missing or wrong, or a part left unclosed)',
      });
      expect(storedFiles().length).toBe(before);
    }
  });

  it('an unknown collection', async () => {
    const response = await uploadFile(t, token, { filename: 'a.txt', content: 'hello' }, { collectionId: 'aaaaaaaaaaaaaaaaaaaaaaaa' });
    expect(response.statusCode).toBe(404);
    expect(response.json().message).toBe('Collection not found');
  });
});

describe('accepted, then ended in error with the reason', () => {
  it('a corrupt PDF', async () => {
    const pdf = await makePdf([['fine text']]);
    const corrupt = Buffer.concat([pdf.subarray(0, 20), Buffer.from('garbage'.repeat(50))]);
    await expectErrorStatus({ filename: 'broken.pdf', content: corrupt }, /PDF could not be read/);
  });

  it('a ZIP bomb inside a DOCX', async () => {
    const bomb = makeZipBombDocx(24);
    expect(bomb.length).toBeLessThan(LIMIT);
    await expectErrorStatus({ filename: 'bomb.docx', content: bomb }, /ZIP bomb/);
  });

  it('a DOCX without a document body', async () => {
    const { zipSync, strToU8 } = await import('fflate');
    const hollow = Buffer.from(zipSync({ 'readme.txt': strToU8('no word/document.xml here') }));
    await expectErrorStatus({ filename: 'hollow.docx', content: hollow }, /no document body/);
  });

  it('a text file with nothing but whitespace and control characters', async () => {
    await expectErrorStatus({ filename: 'blank.md', content: ' \n\t\u0001\u0002 \n' }, /No text/);
  });

  it('a text file with invalid UTF-8 past the first bytes', async () => {
    const content = Buffer.concat([Buffer.from('a'.repeat(10_000)), Buffer.from([0xc3, 0x28, 0x41])]);
    await expectErrorStatus({ filename: 'latin.txt', content }, /not valid UTF-8/);
  });
});

describe('a path-like filename', () => {
  it('keeps only the last segment as the name, and the storage key is the service\'s own', async () => {
    const record = await uploadAndIngest(t, token, { filename: '../../etc/x.txt', content: 'escape attempt with word quixotry' });
    expect(record.originalname).toBe('x.txt');
    expect(record.status).toBe('ready');
    for (const file of storedFiles()) {
      expect(file.startsWith(path.join(t.dataDir, 'files') + path.sep)).toBe(true);
      expect(path.basename(file)).toMatch(/^[0-9a-f]{24}$/);
    }
    const download = await t.app.inject({ method: 'GET', url: record.file_url, headers: { 'x-access-token': token } });
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="x.txt"/);
  });
});

describe('a file sent to another route', () => {
  it('answers 415 in the failure shape: only the upload takes multipart bodies', async () => {
    const before = storedFiles().length;
    const body = multipart({ key_name: 'a', key_value: 'b' }, { filename: 'note.txt', content: 'sent to the wrong place' });
    for (const url of ['/api/user/memory', '/api/user/files/collections']) {
      const response = await t.app.inject({ method: 'POST', url, headers: { ...body.headers, 'x-access-token': token }, payload: body.payload });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toEqual({ success: false, message: 'Unsupported content type', code: 'UNSUPPORTED_MEDIA_TYPE' });
    }
    expect(storedFiles().length).toBe(before);
  });
});

describe('nothing else is affected', () => {
  it('the good file is still ready and found', async () => {
    expect((await getFile(t, token, good._id)).status).toBe('ready');
    const results = await search(t, token, 'pangolin');
    expect(results[0].uploadId).toBe(good._id);
  });
});
