// Retrieval pieces on their own: chunking, sanitizing, type detection, the local embedder, rank
// fusion and redaction; then hybrid search on the real database (pgvector where it exists).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localEmbedding } from '../../ai/local-embedder.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { search, uploadAndIngest } from '../../../test/support/files.js';
import { chunkText, sanitizeChunk } from './chunking.js';
import { searchFullText, type ChunkHit } from './chunks.repo.js';
import { detectType, safeDisplayName, TypeMismatch, UnsupportedType } from './detect.js';
import { CONFIDENTIAL_PREVIEW_CHARS, reciprocalRankFusion, redactConfidential, REDACTION_SUFFIX, retrievalSetupOf, searchForTurn } from './retrieval.js';

describe('chunking and sanitizing', () => {
  it('starts a new chunk at a heading and carries an overlap between chunks', () => {
    const body = (word: string) => Array.from({ length: 12 }, (_, i) => `${word} sentence number ${i} goes on for a while.`).join(' ');
    const chunks = chunkText(`# One\n\n${body('alpha')}\n\n${body('alpha')}\n\n# Two\n\n${body('beta')}`);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks.every((c) => c.length <= 1_400)).toBe(true);
    const two = chunks.findIndex((c) => c.includes('# Two'));
    expect(two).toBeGreaterThan(0);
    // The chunk after a break starts with the tail of the one before it.
    const tail = chunks[1].slice(0, 40);
    expect(chunks[0]).toContain(tail.split('\n')[0].slice(0, 20));
  });

  it('cuts one enormous line into bounded chunks', () => {
    const chunks = chunkText('word '.repeat(5_000));
    expect(chunks.length).toBeGreaterThan(10);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(1_400);
  });

  it('drops scripts, control and invisible characters, and normalises Unicode and whitespace', () => {
    expect(sanitizeChunk('a\u0000b\u200bc   d\t\te\n\n\n\nf<script>alert(1)</script>g ﬁ')).toBe('abc d e\n\nf g fi');
  });
});

describe('type detection', () => {
  const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]);
  it('accepts a name and content that agree', () => {
    expect(detectType('a.PDF', Buffer.from('%PDF-1.7\n'), false)).toMatchObject({ kind: 'pdf', extension: '.pdf' });
    expect(detectType('a.docx', zip, false).kind).toBe('docx');
    expect(detectType('a.md', Buffer.from('# héllo'), true).kind).toBe('markdown');
  });
  it('refuses a mismatch and an unknown type', () => {
    expect(() => detectType('a.txt', zip, false)).toThrow(TypeMismatch);
    expect(() => detectType('a.csv', Buffer.from([0xff, 0xfe, 0x00]), true)).toThrow(TypeMismatch);
    expect(() => detectType('a.exe', Buffer.from('MZ'), true)).toThrow(UnsupportedType);
    expect(() => detectType('noextension', Buffer.from('hi'), true)).toThrow(UnsupportedType);
  });
  it('makes safe display names', () => {
    expect(safeDisplayName('../../x.txt')).toBe('x.txt');
    expect(safeDisplayName('C:\\Users\\me\\cv.pdf')).toBe('cv.pdf');
    expect(safeDisplayName('..')).toBe('file');
    expect(safeDisplayName('a\u0000b.txt')).toBe('ab.txt');
    expect(safeDisplayName(`${'n'.repeat(300)}.md`)).toHaveLength(200);
  });
});

describe('local embedder, fusion and redaction', () => {
  const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i], 0);
  it('is deterministic, unit length, and puts near spellings closer than unrelated text', () => {
    const a = localEmbedding('quokkaberry jam recipe', 256);
    expect(localEmbedding('quokkaberry jam recipe', 256)).toEqual(a);
    expect(cosine(a, a)).toBeCloseTo(1, 6);
    const word = localEmbedding('quokkaberry', 256);
    expect(cosine(word, localEmbedding('quokaberry', 256))).toBeGreaterThan(0.3);
    expect(Math.abs(cosine(word, localEmbedding('tax law of 1902', 256)))).toBeLessThan(0.2);
    expect(cosine(localEmbedding('', 256), localEmbedding('', 256))).toBeCloseTo(1, 6);
  });

  it('fuses ranked lists by reciprocal rank', () => {
    const hit = (id: string): ChunkHit => ({ chunkId: id, fileId: 'f', originalname: 'n', text: id, chunkIndex: 0, length: 1, confidential: false, score: 0 });
    const fused = reciprocalRankFusion([[hit('a'), hit('b'), hit('c')], [hit('c'), hit('b'), hit('d')]], 3);
    // c: 1/61 + 1/63 edges out b: 2/62; a (one list, first) beats d (one list, third).
    expect(fused.map((h) => h.chunkId)).toEqual(['c', 'b', 'a']);
    expect(fused[0].score).toBeCloseTo(1 / 61 + 1 / 63, 12);
  });

  it('redacts to at most 100 characters plus the suffix only when longer', () => {
    expect(redactConfidential('x'.repeat(100))).toBe('x'.repeat(100));
    expect(redactConfidential('y'.repeat(101))).toBe('y'.repeat(CONFIDENTIAL_PREVIEW_CHARS) + REDACTION_SUFFIX);
  });
});

describe('search on the database', () => {
  let t: TestApp;
  let person: BuiltUser;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({ workers: true });
    person = await buildUser(t.platform.database.db);
    token = await signIn(t.app, person.user.email);
  });
  afterAll(() => t.close());

  it('is hybrid where pgvector exists (a misspelling still finds the passage), full text elsewhere', async () => {
    const file = await uploadAndIngest(t, token, { filename: 'fruit.txt', content: 'Our orchard grows the quokkaberry every summer.' });
    await uploadAndIngest(t, token, { filename: 'tax.txt', content: 'Regulations concerning maritime tariffs of 1902.' });
    const hybrid = retrievalSetupOf(t.platform.database).hybrid;
    expect(hybrid).toBe(t.platform.database.vector);
    const misspelt = await search(t, token, 'quokaberry');
    if (hybrid) expect(misspelt[0].uploadId).toBe(file._id);
    else expect(misspelt).toEqual([]);
    const exact = await search(t, token, 'quokkaberry');
    expect(exact[0].uploadId).toBe(file._id);
  });

  it('ranks full-text passages holding every word before those holding only some', async () => {
    // The one-word passages repeat their word, so on text rank alone they could outrank the passage with both.
    const both = await uploadAndIngest(t, token, { filename: 'both.txt', content: 'The gondolier sang of the lagoonfish at dawn.' });
    const first = await uploadAndIngest(t, token, { filename: 'first.txt', content: 'Gondolier, gondolier, gondolier: rowing past.' });
    const second = await uploadAndIngest(t, token, { filename: 'second.txt', content: 'Lagoonfish and lagoonfish, lagoonfish again.' });
    const scope = { twinId: person.twin!.id, userId: person.user.id, includeShared: false };
    const hits = await searchFullText(t.platform.database.db, scope, 'gondolier lagoonfish', 5);
    expect(hits.map((hit) => hit.fileId)).toHaveLength(3);
    expect(hits[0].fileId).toBe(both._id);
    expect(new Set(hits.slice(1).map((hit) => hit.fileId))).toEqual(new Set([first._id, second._id]));
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    const stranger = await buildUser(t.platform.database.db, { twin: person.twin });
    expect(await searchFullText(t.platform.database.db, { ...scope, userId: stranger.user.id }, 'gondolier lagoonfish', 5)).toEqual([]);
  });

  it('gives the engine entries through searchForTurn, scoped to the actor and limited', async () => {
    for (let i = 0; i < 4; i += 1) {
      await uploadAndIngest(t, token, { filename: `n${i}.md`, content: `Note ${i} about the zeppelin hangar.` }, { confidential: i === 0 ? 'true' : 'false' });
    }
    const actor = { userId: person.user.id, sessionId: 'x', email: person.user.email, accountType: 'user' as const, twinId: person.twin!.id, role: 'user' as const, permissions: [], launchScope: null, mustChangePassword: false };
    const entries = await searchForTurn(t.platform.database, actor, 'zeppelin hangar', { limit: 3 });
    expect(entries).toHaveLength(3);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(['chunkIndex', 'chunkText', 'confidential', 'length', 'mode', 'originalname', 'score', 'uploadId']);
      expect(entry.mode).toBe('RAG');
    }
    const other = await buildUser(t.platform.database.db, { twin: person.twin });
    expect(await searchForTurn(t.platform.database, { ...actor, userId: other.user.id }, 'zeppelin hangar')).toEqual([]);
    expect(await searchForTurn(t.platform.database, { ...actor, twinId: null }, 'zeppelin hangar')).toEqual([]);
  });
});
