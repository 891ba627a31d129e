// bench/retrieval: ingestion rate (the real ingestion job minus the embedding call) and search latency
// over a synthetic corpus made here, on PGlite and (with BENCH_DATABASE_URL) on PostgreSQL. Next to
// each indexed search, an exact scan of the same query in the same run; where pgvector exists, recall@10
// of the HNSW index against the exact nearest neighbours.
// Targets on PostgreSQL: search p99 ≤ 50 ms at 100k chunks; ingestion ≥ 500 chunks/s.
// Figures: docs/performance.md ("bench:retrieval").
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench npm run bench:retrieval
//   BENCH_CHUNKS=20000 npm run bench:retrieval        (a quicker, smaller run; BENCH_SKIP_PGLITE=1 for PostgreSQL only)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { localEmbedding } from '../src/ai/local-embedder.js';
import { createLocalEmbedder } from '../src/ai/embeddings.js';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/client.js';
import { createLocalStorage, newStorageKey } from '../src/platform/storage/storage.js';
import { insertTwin } from '../src/modules/twins/twins.repo.js';
import { insertUser } from '../src/modules/users/users.repo.js';
import { ensureVectorSchema, searchFullText, searchVector, type SearchScope } from '../src/modules/files/chunks.repo.js';
import { insertFile } from '../src/modules/files/files.repo.js';
import { ingestFile } from '../src/modules/files/ingestion.js';
import { registerRetrieval, searchChunks } from '../src/modules/files/retrieval.js';

const TARGET_CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const PARAGRAPHS_PER_FILE = 500;
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const DIMENSIONS = 256;

// Deterministic pseudo-random numbers (mulberry32), so every run searches the same corpus.
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = random(42);
const SYLLABLES = ['ka', 'lo', 'mi', 'ran', 'tu', 'vel', 'sor', 'qui', 'ne', 'bax', 'dor', 'fen', 'gil', 'hu', 'jo', 'pra', 'zet', 'wu'];
const vocabulary = Array.from({ length: 30_000 }, (_, i) => {
  let word = '';
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word + SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
});
// Zipf-like word frequencies: rank r with weight 1/r.
const cumulative: number[] = [];
vocabulary.reduce((sum, _, r) => (cumulative[r] = sum + 1 / (r + 1)), 0);
function zipfWord(): string {
  const x = rand() * cumulative[cumulative.length - 1];
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
}
const paragraph = () => Array.from({ length: 130 }, zipfWord).join(' ') + '.';
const queries = Array.from({ length: QUERIES }, () => [vocabulary[100 + Math.floor(rand() * 5_000)], vocabulary[100 + Math.floor(rand() * 5_000)]].join(' '));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}
async function latencies(run: (query: string) => Promise<unknown>): Promise<string> {
  for (const query of queries.slice(0, 10)) await run(query); // warm-up
  const samples: number[] = [];
  for (const query of queries) samples.push((await time(() => run(query))).ms);
  return `p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms`;
}
/**
 * The same query without the search index: GIN is only reached through bitmap scans, HNSW through
 * index scans (the vector query reads its candidates in a CTE, so the join keeps its primary key).
 */
const exactly = <T>(database: DatabaseHandle, off: 'enable_bitmapscan' | 'enable_indexscan', fn: (db: DatabaseHandle['db']) => Promise<T>) =>
  database.db.transaction(async (tx) => {
    await tx.execute(sql.raw(`set local ${off} = off`));
    return fn(tx as unknown as DatabaseHandle['db']);
  });

async function bench(database: DatabaseHandle, label: string): Promise<{ ingestRate: number; p99: number }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-bench-'));
  const storage = createLocalStorage(dataDir);
  const db = database.db;
  const twin = await insertTwin(db, { name: 'Bench twin' });
  const user = await insertUser(db, { email: `bench-${Date.now()}@example.test` });
  const scope: SearchScope = { twinId: twin.id, userId: user.id, includeShared: false };
  const embedder = createLocalEmbedder(DIMENSIONS);
  const vector = (await ensureVectorSchema(database, DIMENSIONS)).ready;
  // Bulk load first, index after: inserting into an HNSW-indexed table is ~17x slower.
  if (vector) await db.execute(sql`drop index if exists file_chunks_embedding_idx`);

  console.log(`\n== ${label} (pgvector: ${vector ? 'yes' : 'no'}) ==`);
  let chunks = 0;
  let ingestMs = 0;
  const deps = { database, storage, embedder, hybrid: false };
  const signal = new AbortController().signal;
  while (chunks < TARGET_CHUNKS) {
    const text = Array.from({ length: PARAGRAPHS_PER_FILE }, paragraph).join('\n\n');
    const key = newStorageKey('bench');
    await storage.put(key, Buffer.from(text));
    const file = await insertFile(db, {
      twinId: twin.id, userId: user.id, originalname: 'doc.md', extension: '.md', mimetype: 'text/markdown',
      kind: 'markdown', size: text.length, storageKey: key,
    });
    const { ms } = await time(() => ingestFile(deps, { fileId: file.id, generation: 1 }, { signal, attempt: 1 }));
    ingestMs += ms;
    const [{ n }] = ((await db.execute(sql`select chunk_count as n from files where id = ${file.id}`)) as unknown as { rows: [{ n: number }] }).rows;
    chunks += n;
  }
  const ingestRate = chunks / (ingestMs / 1000);
  console.log(`ingestion (extract, chunk, sanitize, write, finalize; no embedding): ${chunks} chunks, ${ingestRate.toFixed(0)} chunks/s`);
  // Statistics as autovacuum would have them: without those of files, the planner takes the twin for a
  // one-file vault and filters its chunks file by file (~350 ms a search at 100k chunks).
  await db.execute(sql`analyze files, file_chunks`);

  const fts = await latencies((q) => searchFullText(db, scope, q, 10));
  const ftsExact = await latencies((q) => exactly(database, 'enable_bitmapscan', (tx) => searchFullText(tx, scope, q, 10)));
  console.log(`full text, GIN index:  ${fts}`);
  console.log(`full text, exact scan: ${ftsExact}`);
  let p99 = Number(/p99 ([\d.]+)/.exec(fts)![1]);

  if (vector) {
    const embedStart = performance.now();
    const ids = ((await db.execute(sql`select id, text from file_chunks`)) as unknown as { rows: Array<{ id: string; text: string }> }).rows;
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      const values = batch.map((row) => sql`(${row.id}, ${`[${localEmbedding(row.text, DIMENSIONS).join(',')}]`}::vector)`);
      await db.execute(sql`update file_chunks c set embedding = v.e from (values ${sql.join(values, sql`, `)}) as v(id, e) where c.id = v.id`);
    }
    console.log(`embeddings written (local embedder, outside the ingestion figure): ${((performance.now() - embedStart) / 1000).toFixed(1)} s`);
    // As ingestion does (analyzeStaleTables; a server's autovacuum): statistics taken while every
    // embedding was empty would steer the planner away from the index.
    await db.execute(sql`analyze file_chunks`);
    const { ms: indexMs } = await time(() => db.execute(sql`create index file_chunks_embedding_idx on file_chunks using hnsw (embedding vector_cosine_ops)`));
    console.log(`HNSW index build: ${(indexMs / 1000).toFixed(1)} s`);
    const vectors = new Map(queries.map((q) => [q, localEmbedding(q, DIMENSIONS)]));
    console.log(`vector, HNSW index:    ${await latencies((q) => searchVector(db, scope, vectors.get(q)!, 10))}`);
    console.log(`vector, exact scan:    ${await latencies((q) => exactly(database, 'enable_indexscan', (tx) => searchVector(tx, scope, vectors.get(q)!, 10)))}`);
    let overlap = 0;
    for (const q of queries) {
      const approx = new Set((await searchVector(db, scope, vectors.get(q)!, 10)).map((h) => h.chunkId));
      const exact = await exactly(database, 'enable_indexscan', (tx) => searchVector(tx, scope, vectors.get(q)!, 10));
      overlap += exact.filter((h) => approx.has(h.chunkId)).length / Math.max(1, exact.length);
    }
    console.log(`recall@10 of HNSW against the exact scan: ${(overlap / queries.length).toFixed(3)}`);
    registerRetrieval(database, { embedder, hybrid: true });
    const hybrid = await latencies((q) => searchChunks(database, scope, q, 10));
    console.log(`hybrid (full text + vector, RRF, query embedding included): ${hybrid}`);
    p99 = Number(/p99 ([\d.]+)/.exec(hybrid)![1]);
  }
  rmSync(dataDir, { recursive: true, force: true });
  return { ingestRate, p99 };
}

if (process.env.BENCH_SKIP_PGLITE !== '1') {
  const pglite = await openDatabase({ memory: true });
  await bench(pglite, 'PGlite (in memory)');
  await pglite.close();
}

const url = process.env.BENCH_DATABASE_URL;
if (url) {
  const postgres = await openDatabase({ databaseUrl: url });
  const result = await bench(postgres, 'PostgreSQL');
  await postgres.close();
  const ok = result.p99 <= 50 && result.ingestRate >= 500;
  console.log(`\nPostgreSQL targets: search p99 ${result.p99.toFixed(1)} ms (≤ 50), ingestion ${result.ingestRate.toFixed(0)} chunks/s (≥ 500): ${ok ? 'met' : 'NOT met'}`);
  process.exit(ok ? 0 : 1);
} else {
  console.log('\nSet BENCH_DATABASE_URL to measure PostgreSQL against the targets.');
}
