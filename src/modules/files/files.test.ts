// The files vault through the real routes: real PDF/DOCX/HTML/Markdown files made here, ingested
// by the real job queue, found by search; downloads, deletes, and who may see what.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { makeDocx, makePdf } from '../../../test/support/documents.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { getFile, search, uploadAndIngest, uploadFile } from '../../../test/support/files.js';
import { REDACTION_SUFFIX } from './retrieval.js';

let t: TestApp;
let owner: BuiltUser;
let ownerToken: string;
let neighbour: BuiltUser; // same twin, no file access
let neighbourToken: string;
let librarian: BuiltUser; // same twin, holds files.access
let librarianToken: string;
let stranger: BuiltUser; // admin of another twin
let strangerToken: string;

beforeAll(async () => {
  t = await startTestApp({ workers: true });
  const db = t.platform.database.db;
  owner = await buildUser(db);
  neighbour = await buildUser(db, { twin: owner.twin });
  librarian = await buildUser(db, { twin: owner.twin, grants: ['files.access'] });
  stranger = await buildUser(db, { role: 'admin' });
  [ownerToken, neighbourToken, librarianToken, strangerToken] = await Promise.all(
    [owner, neighbour, librarian, stranger].map((p) => signIn(t.app, p.user.email)),
  );
});
afterAll(() => t.close());

const auth = (token: string) => ({ 'x-access-token': token });
/** Does any passage carry the word? (Hybrid search may still return unrelated neighbours.) */
const mentions = (results: Array<{ chunkText: string }>, word: string) => results.some((r) => r.chunkText.includes(word));

describe('ingesting real documents', () => {
  it('ingests a PDF and finds its distinctive word', async () => {
    const pdf = await makePdf([['Quarterly report of the lighthouse keepers.'], ['The rare word quokkaberry appears on page two.']]);
    const file = await uploadAndIngest(t, ownerToken, { filename: 'report.pdf', content: pdf });
    expect(file).toMatchObject({ status: 'ready', stage: 'finalize', progress: 100, error: null, originalname: 'report.pdf', mimetype: 'application/pdf' });
    expect(file.chunkCount).toBeGreaterThanOrEqual(1);
    const results = await search(t, ownerToken, 'quokkaberry');
    expect(results.length).toBe(1);
    expect(results[0]).toMatchObject({ uploadId: file._id, originalname: 'report.pdf', mode: 'RAG', confidential: false, chunkIndex: 0 });
    expect(results[0].chunkText).toContain('quokkaberry');
    expect(results[0].length).toBe(results[0].chunkText.length);
    expect(results[0].score).toBeGreaterThan(0);
  });

  it('ingests a DOCX and finds its distinctive word', async () => {
    const docx = makeDocx(['Minutes of the garden committee.', 'We agreed to plant zanzibarite hedges along the north wall.']);
    const file = await uploadAndIngest(t, ownerToken, { filename: 'minutes.docx', content: docx });
    expect(file.status).toBe('ready');
    const [hit] = await search(t, ownerToken, 'zanzibarite hedges');
    expect(hit).toMatchObject({ uploadId: file._id, originalname: 'minutes.docx' });
    expect(hit.chunkText).toContain('zanzibarite');
  });

  it('ingests HTML without its scripts, and CSV, JSON and code as text', async () => {
    const html = '<html><head><script>var trackerword = 1;</script><style>.x{}</style></head><body><h1>Recipes</h1><p>Bake the plumquat tart.</p></body></html>';
    const page = await uploadAndIngest(t, ownerToken, { filename: 'recipes.html', content: html });
    expect(page.status).toBe('ready');
    expect((await search(t, ownerToken, 'plumquat'))[0].uploadId).toBe(page._id);
    expect(mentions(await search(t, ownerToken, 'trackerword'), 'trackerword')).toBe(false);
    for (const [filename, content, word] of [
      ['table.csv', 'name,fruit\nann,grapefruitish\n', 'grapefruitish'],
      ['data.json', '{"animal": "capybaroo"}', 'capybaroo'],
      ['script.py', 'def walrusify():\n    return "tusk"\n', 'walrusify'],
    ]) {
      const file = await uploadAndIngest(t, ownerToken, { filename, content });
      expect(file.status).toBe('ready');
      expect((await search(t, ownerToken, word)).map((r) => r.uploadId)).toContain(file._id);
    }
  });

  it('chunks a long document into several overlapping chunks, all findable', async () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} talks about topic${i} in some detail with enough words to fill space nicely.`);
    const file = await uploadAndIngest(t, ownerToken, { filename: 'long.md', content: `# Long\n\n${paragraphs.join('\n\n')}` });
    expect(file.chunkCount).toBeGreaterThan(2);
    const [last] = await search(t, ownerToken, 'topic39');
    expect(last.uploadId).toBe(file._id);
    expect(last.chunkIndex).toBe(file.chunkCount - 1);
  });
});

describe('confidential files', () => {
  it('redacts a confidential chunk to 100 characters plus the suffix', async () => {
    const secret = `The vault code word is sesquipedalian. ${'Further private detail follows here. '.repeat(10)}`;
    const file = await uploadAndIngest(t, ownerToken, { filename: 'secret.txt', content: secret }, { confidential: 'true' });
    expect(file.confidential).toBe(true);
    const [hit] = await search(t, ownerToken, 'sesquipedalian');
    expect(hit.confidential).toBe(true);
    expect(hit.chunkText).toBe(secret.trim().slice(0, 100) + REDACTION_SUFFIX);
    expect(hit.length).toBeGreaterThan(100);
  });

  it('leaves a short confidential chunk whole, without the suffix', async () => {
    await uploadAndIngest(t, ownerToken, { filename: 'pin.txt', content: 'The locker pin word is ossifrage.' }, { confidential: '1' });
    const [hit] = await search(t, ownerToken, 'ossifrage');
    expect(hit).toMatchObject({ confidential: true, chunkText: 'The locker pin word is ossifrage.' });
  });
});

describe('editing a text file', () => {
  it('replaces Markdown content: the new text is found, the old is not, ids unchanged', async () => {
    const before = await uploadAndIngest(t, ownerToken, { filename: 'notes.md', content: '# Notes\n\nThe password hint is marmaladeon.' });
    const response = await t.app.inject({
      method: 'PUT',
      url: `/api/user/files/${before._id}/content`,
      headers: auth(ownerToken),
      payload: { content: '# Notes\n\nThe password hint is xylophonica.' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, reprocessing: true, message: expect.any(String), uploadId: before._id });
    await t.platform.jobs.drain('files.ingest');
    const after = await getFile(t, ownerToken, before._id);
    expect(after).toMatchObject({ _id: before._id, filename: before.filename, file_url: before.file_url, status: 'ready' });
    expect((await search(t, ownerToken, 'xylophonica'))[0].uploadId).toBe(before._id);
    expect(mentions(await search(t, ownerToken, 'marmaladeon'), 'marmaladeon')).toBe(false);
    const download = await t.app.inject({ method: 'GET', url: before.file_url, headers: auth(ownerToken) });
    expect(download.body).toBe('# Notes\n\nThe password hint is xylophonica.');
  });

  it('answers 415 for a PDF, a DOCX and an image', async () => {
    const pdf = await uploadFile(t, ownerToken, { filename: 'edit-me.pdf', content: await makePdf([['not editable']]) });
    const docx = await uploadFile(t, ownerToken, { filename: 'edit-me.docx', content: makeDocx(['not editable']) });
    const png = await uploadFile(t, ownerToken, { filename: 'pixel.png', content: Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') });
    for (const upload of [pdf, docx, png]) {
      const response = await t.app.inject({
        method: 'PUT',
        url: `/api/user/files/${upload.json().uploadId}/content`,
        headers: auth(ownerToken),
        payload: { content: 'new text' },
      });
      expect(response.statusCode).toBe(415);
      expect(response.json()).toMatchObject({ success: false, message: expect.stringContaining('cannot be edited as text') });
    }
  });

  it('refuses empty content with 400 and another person\'s file with 404', async () => {
    const file = await uploadAndIngest(t, ownerToken, { filename: 'keep.txt', content: 'unchanged text here' });
    for (const content of ['', '   \n ']) {
      const empty = await t.app.inject({ method: 'PUT', url: `/api/user/files/${file._id}/content`, headers: auth(ownerToken), payload: { content } });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().success).toBe(false);
    }
    for (const token of [librarianToken, neighbourToken, strangerToken]) {
      const response = await t.app.inject({ method: 'PUT', url: `/api/user/files/${file._id}/content`, headers: auth(token), payload: { content: 'hijack' } });
      expect(response.statusCode).toBe(404);
    }
    expect((await getFile(t, ownerToken, file._id)).status).toBe('ready');
  });
});

describe('who may see a file', () => {
  let file: { _id: string; file_url: string };
  beforeAll(async () => {
    file = await uploadAndIngest(t, ownerToken, { filename: 'private.txt', content: 'My private word is thingamajigamy.' });
  });

  it('gives 404 to another member without file access and to another twin, on every route', async () => {
    for (const token of [neighbourToken, strangerToken]) {
      for (const url of [`/api/user/files/${file._id}`, file.file_url]) {
        const response = await t.app.inject({ method: 'GET', url, headers: auth(token) });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual({ success: false, message: 'File not found' });
      }
      const del = await t.app.inject({ method: 'DELETE', url: `/api/user/files/${file._id}`, headers: auth(token) });
      expect(del.statusCode).toBe(404);
      expect(mentions(await search(t, token, 'thingamajigamy'), 'thingamajigamy')).toBe(false);
      const list = await t.app.inject({ method: 'GET', url: '/api/user/files', headers: auth(token) });
      expect(list.json().data.map((f: { _id: string }) => f._id)).not.toContain(file._id);
    }
  });

  it('lets a holder of files.access read it, but search only the twin\'s shared files', async () => {
    const response = await t.app.inject({ method: 'GET', url: file.file_url, headers: auth(librarianToken) });
    expect(response.statusCode).toBe(200);
    expect(mentions(await search(t, librarianToken, 'thingamajigamy'), 'thingamajigamy')).toBe(false);
    const shared = await uploadAndIngest(t, librarianToken, { filename: 'handbook.txt', content: 'The twin handbook mentions flibbertigibbet.' }, { shared: 'true' });
    expect(shared.shared).toBe(true);
    expect((await search(t, librarianToken, 'flibbertigibbet'))[0].uploadId).toBe(shared._id);
    // A member without files.access does not search the twin's shared files, and may not share.
    expect(mentions(await search(t, neighbourToken, 'flibbertigibbet'), 'flibbertigibbet')).toBe(false);
    const refused = await uploadFile(t, neighbourToken, { filename: 'mine.txt', content: 'hello' }, { shared: 'true' });
    expect(refused.statusCode).toBe(403);
  });

  it('downloads as an attachment with nosniff and the exact bytes', async () => {
    const response = await t.app.inject({ method: 'GET', url: file.file_url, headers: auth(ownerToken) });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="private.txt"/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toBe('My private word is thingamajigamy.');
  });

  it('lists own files with their status and stage', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/user/files?limit=100', headers: auth(ownerToken) });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ success: true, page: 1, limit: 100 });
    const listed = body.data.find((f: { _id: string }) => f._id === file._id);
    expect(listed).toMatchObject({ status: 'ready', stage: 'finalize', originalname: 'private.txt' });
    expect(body.total).toBe(body.data.length);
  });
});

describe('deleting a file', () => {
  it('removes the record, its chunks and the stored bytes', async () => {
    const file = await uploadAndIngest(t, ownerToken, { filename: 'gone.txt', content: 'Soon gone: the word is bamboozlement.' });
    const stored = (await t.platform.database.db.execute(sql`select storage_key from files where id = ${file._id}`)) as unknown as { rows: Array<{ storage_key: string }> };
    const key = stored.rows[0].storage_key;
    expect(await t.platform.storage.exists(key)).toBe(true);
    const response = await t.app.inject({ method: 'DELETE', url: `/api/user/files/${file._id}`, headers: auth(ownerToken) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, message: 'File deleted' });
    expect((await t.app.inject({ method: 'GET', url: `/api/user/files/${file._id}`, headers: auth(ownerToken) })).statusCode).toBe(404);
    expect(mentions(await search(t, ownerToken, 'bamboozlement'), 'bamboozlement')).toBe(false);
    const chunks = (await t.platform.database.db.execute(sql`select count(*)::int as n from file_chunks where file_id = ${file._id}`)) as unknown as { rows: Array<{ n: number }> };
    expect(chunks.rows[0].n).toBe(0);
    expect(await t.platform.storage.exists(key)).toBe(false);
  });
});

describe('twin rules for uploads', () => {
  it('refuses uploads to users of a twin with uploads disabled, but not to its admins', async () => {
    const twin = await buildTwin(t.platform.database.db, { disableFileUploadForUser: true });
    const member = await buildUser(t.platform.database.db, { twin });
    const admin = await buildUser(t.platform.database.db, { twin, role: 'admin' });
    const refused = await uploadFile(t, await signIn(t.app, member.user.email), { filename: 'a.txt', content: 'hello' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, code: 'FILE_UPLOAD_DISABLED' });
    const allowed = await uploadFile(t, await signIn(t.app, admin.user.email), { filename: 'a.txt', content: 'hello' });
    expect(allowed.statusCode).toBe(201);
  });

  it("enforces the twin's maxFiles per person", async () => {
    const twin = await buildTwin(t.platform.database.db, { maxFiles: 2 });
    const member = await buildUser(t.platform.database.db, { twin });
    const token = await signIn(t.app, member.user.email);
    expect((await uploadFile(t, token, { filename: '1.txt', content: 'one' })).statusCode).toBe(201);
    expect((await uploadFile(t, token, { filename: '2.txt', content: 'two' })).statusCode).toBe(201);
    const third = await uploadFile(t, token, { filename: '3.txt', content: 'three' });
    expect(third.statusCode).toBe(403);
    expect(third.json()).toMatchObject({ success: false, code: 'FILE_LIMIT_REACHED' });
  });

  it('refuses an upload from a person with no twin', async () => {
    const loner = await buildUser(t.platform.database.db, { twin: null });
    const response = await uploadFile(t, await signIn(t.app, loner.user.email), { filename: 'a.txt', content: 'hello' });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('NO_TWIN');
  });
});
