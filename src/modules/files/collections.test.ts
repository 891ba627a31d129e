// Collections and their ZIP (spec behaviour 10): the owner and holders of files.access in its twin
// may download it; anyone else, in the twin or outside it, gets 404. Also the admin uploads family.
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { makePdf } from '../../../test/support/documents.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { search, uploadAndIngest, uploadFile } from '../../../test/support/files.js';

let t: TestApp;
let owner: BuiltUser;
let tokens: Record<'owner' | 'member' | 'keeper' | 'outsider' | 'admin' | 'outsideAdmin', string>;
let collectionId: string;
let pdf: Buffer;

beforeAll(async () => {
  t = await startTestApp({ workers: true });
  const db = t.platform.database.db;
  owner = await buildUser(db);
  const member = await buildUser(db, { twin: owner.twin });
  const keeper = await buildUser(db, { twin: owner.twin, grants: ['files.access'] });
  const outsider = await buildUser(db, { grants: ['files.access'] });
  const admin = await buildUser(db, { twin: owner.twin, role: 'admin' });
  const outsideAdmin = await buildUser(db, { role: 'admin' });
  const [o, m, k, x, a, oa] = await Promise.all([owner, member, keeper, outsider, admin, outsideAdmin].map((p) => signIn(t.app, p.user.email)));
  tokens = { owner: o, member: m, keeper: k, outsider: x, admin: a, outsideAdmin: oa };
  const created = await t.app.inject({ method: 'POST', url: '/api/user/files/collections', headers: auth(o), payload: { name: 'Course pack' } });
  expect(created.statusCode).toBe(201);
  collectionId = created.json().data._id;
  pdf = await makePdf([['Collected reading']]);
  await uploadAndIngest(t, o, { filename: 'reading.pdf', content: pdf }, { collectionId });
  await uploadAndIngest(t, o, { filename: 'notes.md', content: '# Notes\nthe first' }, { collectionId });
  await uploadAndIngest(t, o, { filename: 'notes.md', content: '# Notes\nthe second' }, { collectionId });
});
afterAll(() => t.close());

const auth = (token: string) => ({ 'x-access-token': token });
const zip = (token: string, id = collectionId) => t.app.inject({ method: 'GET', url: `/api/user/files/collections/${id}/zip`, headers: auth(token) });

describe('collections', () => {
  it('lists the owner\'s collections with their file counts, and not to another member', async () => {
    const mine = await t.app.inject({ method: 'GET', url: '/api/user/files/collections', headers: auth(tokens.owner) });
    expect(mine.json().data).toEqual([expect.objectContaining({ _id: collectionId, name: 'Course pack', fileCount: 3, isOwner: true })]);
    const theirs = await t.app.inject({ method: 'GET', url: '/api/user/files/collections', headers: auth(tokens.member) });
    expect(theirs.json().data).toEqual([]);
    const keeper = await t.app.inject({ method: 'GET', url: '/api/user/files/collections', headers: auth(tokens.keeper) });
    expect(keeper.json().data.map((c: { _id: string }) => c._id)).toContain(collectionId);
  });

  it('filters the file list by collection', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/api/user/files?collectionId=${collectionId}`, headers: auth(tokens.owner) });
    expect(response.json().total).toBe(3);
  });

  it('streams a ZIP of every file to the owner, with unique names and exact bytes', async () => {
    const response = await zip(tokens.owner);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="Course pack.zip"/);
    const entries = unzipSync(new Uint8Array(response.rawPayload));
    expect(Object.keys(entries).sort()).toEqual(['notes (2).md', 'notes.md', 'reading.pdf']);
    expect(Buffer.from(entries['reading.pdf']).equals(pdf)).toBe(true);
    expect(strFromU8(entries['notes.md'])).toBe('# Notes\nthe first');
  });

  it('lets holders of files.access in its twin (and its admins) download it', async () => {
    expect((await zip(tokens.keeper)).statusCode).toBe(200);
    expect((await zip(tokens.admin)).statusCode).toBe(200);
  });

  it('answers 404 to another member, to another twin even with files.access there, and for an unknown id', async () => {
    for (const token of [tokens.member, tokens.outsider, tokens.outsideAdmin]) {
      const response = await zip(token);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ success: false, message: 'Collection not found' });
    }
    expect((await zip(tokens.owner, 'bbbbbbbbbbbbbbbbbbbbbbbb')).statusCode).toBe(404);
    expect((await zip(tokens.owner, 'not-an-id')).statusCode).toBe(400);
  });

  it("refuses uploads into someone else's collection", async () => {
    const response = await uploadFile(t, tokens.member, { filename: 'sneak.txt', content: 'sneaky' }, { collectionId });
    expect(response.statusCode).toBe(404);
  });
});

describe('admin uploads', () => {
  let target: string;
  beforeAll(async () => {
    target = (await uploadAndIngest(t, tokens.member, { filename: 'member.txt', content: 'member doc with word fandangle' }))._id;
  });

  it("lists the twin's uploads to its admin, 403 to a plain member", async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/admin/uploads?limit=100', headers: auth(tokens.admin) });
    expect(response.statusCode).toBe(200);
    const ids = response.json().data.map((f: { _id: string }) => f._id);
    expect(ids).toContain(target);
    expect(response.json().total).toBe(4);
    const refused = await t.app.inject({ method: 'GET', url: '/api/admin/uploads', headers: auth(tokens.member) });
    expect(refused.statusCode).toBe(403);
    const elsewhere = await t.app.inject({ method: 'GET', url: `/api/admin/uploads?institutionId=${owner.twin!.id}`, headers: auth(tokens.outsideAdmin) });
    expect(elsewhere.statusCode).toBe(403);
  });

  it("answers 404 to another twin's admin, and deletes for the twin's admin", async () => {
    const foreign = await t.app.inject({ method: 'DELETE', url: `/api/admin/upload/${target}`, headers: auth(tokens.outsideAdmin) });
    expect(foreign.statusCode).toBe(404);
    const response = await t.app.inject({ method: 'DELETE', url: `/api/admin/upload/${target}`, headers: auth(tokens.admin) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, message: 'Upload deleted' });
    expect((await search(t, tokens.member, 'fandangle')).some((r) => r.uploadId === target)).toBe(false);
  });

  it('bulk-deletes only rows in twins the admin may act in, and counts them', async () => {
    const mine = (await uploadAndIngest(t, tokens.member, { filename: 'm.txt', content: 'bulk one' }))._id;
    const foreign = (await uploadAndIngest(t, tokens.outsideAdmin, { filename: 'f.txt', content: 'bulk two' }))._id;
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/admin/uploads/bulk-delete',
      headers: auth(tokens.admin),
      payload: { ids: [mine, foreign, 'cccccccccccccccccccccccc'] },
    });
    expect(response.json()).toEqual({ success: true, changed: 1 });
    const still = await t.app.inject({ method: 'GET', url: `/api/user/files/${foreign}`, headers: auth(tokens.outsideAdmin) });
    expect(still.statusCode).toBe(200);
  });
});
