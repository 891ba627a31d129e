// SQL of the chunks table: generation bookkeeping for atomic ingestion, full-text and vector search.
// The `embedding` column exists only where pgvector does (ensureVectorSchema), so it is written and
// read with plain SQL rather than through the drizzle table.
import { sql, type SQL } from 'drizzle-orm';
import type { Database, DatabaseHandle, Executor } from '../../platform/db/client.js';
import { newId } from '../../platform/ids/ids.js';

export interface ChunkInsert {
  twinId: string;
  fileId: string;
  generation: number;
  chunkIndex: number;
  text: string;
  embedding?: number[];
}

export interface ChunkHit {
  chunkId: string;
  fileId: string;
  originalname: string;
  text: string;
  chunkIndex: number;
  length: number;
  confidential: boolean;
  score: number;
}

/** Who may see which files in a search: own files of the twin, plus shared ones with files.access; never a deleted file. */
export interface SearchScope {
  twinId: string;
  userId: string;
  includeShared: boolean;
}

async function rows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

const vectorLiteral = (values: number[]) => `[${values.map((v) => (Number.isFinite(v) ? v : 0)).join(',')}]`;

/**
 * Adds the vector column and its HNSW index where pgvector exists, after the embedded database's own
 * settings of the table (tuneEmbeddedChunks). Idempotent; safe when several processes start at once.
 * Returns false (full-text only) when the column has another dimension.
 */
export async function ensureVectorSchema(database: DatabaseHandle, dimensions: number): Promise<{ ready: boolean; reason?: string }> {
  await tuneEmbeddedChunks(database);
  if (!database.vector) return { ready: false, reason: 'pgvector is not installed' };
  const db = database.db;
  await db.execute(sql.raw(`alter table file_chunks add column if not exists embedding vector(${Math.trunc(dimensions)})`));
  const [column] = await rows<{ dims: number }>(
    db,
    sql`select atttypmod as dims from pg_attribute where attrelid = 'file_chunks'::regclass and attname = 'embedding'`,
  );
  if (column && column.dims !== dimensions) {
    return { ready: false, reason: `the embedding column has ${column.dims} dimensions, the embedder ${dimensions}` };
  }
  try {
    await db.execute(sql`create index if not exists file_chunks_embedding_idx on file_chunks using hnsw (embedding vector_cosine_ops)`);
  } catch (error) {
    // Two processes creating it at once: the loser's duplicate-name error is harmless.
    if ((error as { code?: string }).code !== '23505' && (error as { code?: string }).code !== '42P07') throw error;
  }
  return { ready: true };
}

/**
 * PGlite is one connection (in a thread of its own), so whatever one of its statements does holds every
 * other statement, those of requests included (docs/decisions.md, "Files vault and retrieval"). Two defaults of the chunks table cost a large
 * ingestion long pauses there, and are turned off on PGlite only (on a server these statements run in
 * its own processes, and autovacuum empties the pending list):
 * - the full-text index's pending list (`fastupdate`): inserts are cheap until the list is full, then
 *   one unlucky insert merges it all into the index (0.3 s of CPU every ~1,000 chunks of a 3 MB file).
 *   Without it each insert adds its own entries, for about the same total. A list left by an earlier
 *   start is merged once, here.
 * - planner statistics of `tsv`: nearly all of an ANALYZE of the table (0.2 s of 0.2 s after a 3 MB
 *   file). Without them a full-text match is estimated at 0.5% of the rows, which keeps the GIN index in
 *   the plan; every other column keeps its statistics.
 */
async function tuneEmbeddedChunks(database: Pick<DatabaseHandle, 'kind' | 'executeSql'>): Promise<void> {
  if (database.kind !== 'pglite') return;
  const { rows: [state] } = await database.executeSql(
    `select coalesce('fastupdate=off' = any(i.reloptions), false) as "listOff", coalesce(a.attstattarget = 0, false) as "statsOff"
       from pg_class i, pg_attribute a
      where i.oid = 'file_chunks_tsv_idx'::regclass and a.attrelid = 'file_chunks'::regclass and a.attname = 'tsv'`,
    [],
  );
  if (!state.listOff) {
    await database.executeSql('alter index file_chunks_tsv_idx set (fastupdate = off)');
    await database.executeSql(`select gin_clean_pending_list('file_chunks_tsv_idx')`);
  }
  if (!state.statsOff) await database.executeSql('alter table file_chunks alter column tsv set statistics 0');
}

/** Removes rows of every generation but `keep` (crashed or superseded ingestions). */
export async function deleteChunksExcept(db: Executor, fileId: string, keep: number): Promise<void> {
  await db.execute(sql`delete from file_chunks where file_id = ${fileId} and generation <> ${keep}`);
}

export async function insertChunks(db: Executor, chunks: ChunkInsert[], withEmbedding: boolean): Promise<void> {
  if (chunks.length === 0) return;
  const values = chunks.map((c) =>
    withEmbedding && c.embedding
      ? sql`(${newId()}, ${c.twinId}, ${c.fileId}, ${c.generation}, ${c.chunkIndex}, ${c.text}, ${vectorLiteral(c.embedding)}::vector)`
      : sql`(${newId()}, ${c.twinId}, ${c.fileId}, ${c.generation}, ${c.chunkIndex}, ${c.text})`,
  );
  const columns = withEmbedding
    ? sql`(id, institution_id, file_id, generation, chunk_index, text, embedding)`
    : sql`(id, institution_id, file_id, generation, chunk_index, text)`;
  await db.execute(sql`insert into file_chunks ${columns} values ${sql.join(values, sql`, `)}`);
}

export async function countChunks(db: Executor, fileId: string, generation?: number): Promise<number> {
  const filter = generation === undefined ? sql`` : sql` and generation = ${generation}`;
  const [row] = await rows<{ n: number }>(db, sql`select count(*)::int as n from file_chunks where file_id = ${fileId}${filter}`);
  return row.n;
}

/** The distinct words of a question (at most 32), for building tsqueries. */
export function queryWords(text: string): string[] {
  return [...new Set(text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);
}

/** Matches ranked per query: a common word can match a large share of a twin's chunks. */
const RANK_CANDIDATES = 500;

const scopeSql = (scope: SearchScope) =>
  scope.includeShared
    ? sql`f.institution_id = ${scope.twinId} and f.deleted_at is null and (f.user_id = ${scope.userId} or f.shared)`
    : sql`f.institution_id = ${scope.twinId} and f.deleted_at is null and f.user_id = ${scope.userId}`;

/**
 * Full-text search in two steps. Passages holding every word come first (AND); when they are fewer
 * than asked, passages holding any word fill the rest (OR): a chat question rarely has all its words
 * in one passage. Each step ranks at most RANK_CANDIDATES matches, so one very common word cannot make
 * a search rank half the table. Score: ts_rank_cd, plus 1 when every word matched.
 */
export async function searchFullText(db: Executor, scope: SearchScope, query: string, limit: number): Promise<ChunkHit[]> {
  const words = queryWords(query);
  if (words.length === 0) return [];
  const all = await rankedMatches(db, scope, words.join(' & '), limit, 1);
  if (all.length >= limit || words.length === 1) return all;
  const seen = new Set(all.map((hit) => hit.chunkId));
  const any = await rankedMatches(db, scope, words.join(' | '), limit, 0);
  return [...all, ...any.filter((hit) => !seen.has(hit.chunkId))].slice(0, limit);
}

async function rankedMatches(db: Executor, scope: SearchScope, tsquery: string, limit: number, bonus: number): Promise<ChunkHit[]> {
  // The tsquery is written out twice (not a shared CTE) so the planner sees a constant and uses the GIN index.
  const q = sql`to_tsquery('english', ${tsquery})`;
  // `matches` has no LIMIT of its own: a materialized CTE is planned for reading every row, so the planner
  // takes the GIN index, yet it is read lazily and stops at RANK_CANDIDATES. With the LIMIT inside, the
  // planner would often prefer a sequential scan that stops early, not knowing that testing @@ on each
  // row detoasts its tsvector (measured: 48 ms instead of 5 ms at 100k chunks).
  return rows<ChunkHit>(
    db,
    sql`with matches as materialized (
        select c.id, c.tsv
        from file_chunks c
        join files f on f.id = c.file_id and f.generation = c.generation
        where c.institution_id = ${scope.twinId} and c.tsv @@ ${q} and ${scopeSql(scope)}
      ),
      best as (
        select id, (ts_rank_cd(tsv, ${q}) + ${bonus})::float8 as score
        from (select id, tsv from matches limit ${RANK_CANDIDATES}) candidates
        order by score desc, id limit ${limit}
      )
      select c.id as "chunkId", c.file_id as "fileId", f.originalname, c.text, c.chunk_index as "chunkIndex",
        char_length(c.text) as length, f.confidential, b.score
      from best b
      join file_chunks c on c.id = b.id
      join files f on f.id = c.file_id
      order by b.score desc, c.id`,
  );
}

/**
 * Candidates the HNSW scan keeps (pgvector's default is 40). On the retrieval bench's synthetic corpus
 * at 20k chunks, recall@10 against an exact scan was 0.45 at 40, 0.62 at 100 and 0.75 at 200, for
 * 2.9, 5.4 and 7.7 ms (PGlite p50); 100 buys most of the recall for little time. Real embeddings have
 * far more structure than that corpus and score higher at any setting.
 */
export const HNSW_EF_SEARCH = 100;

/**
 * Nearest neighbours by cosine distance. The tenant filter sits beside the HNSW scan, and pgvector's
 * iterative scan (0.8+) keeps reading the index until enough rows pass it; the outer query restores
 * exact order and applies the reader's scope. Runs in a short transaction for the SET LOCAL.
 */
export async function searchVector(db: Database, scope: SearchScope, embedding: number[], limit: number): Promise<ChunkHit[]> {
  const vector = vectorLiteral(embedding);
  return db.transaction(async (tx) => {
    // Both settings for this transaction only, in one round trip.
    await tx.execute(
      sql`select set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${String(HNSW_EF_SEARCH)}, true)`,
    );
    return rows<ChunkHit>(
      tx,
      sql`with nearest as materialized (
          select c.id, c.file_id, c.generation, c.text, c.chunk_index, c.embedding <=> ${vector}::vector as distance
          from file_chunks c
          where c.institution_id = ${scope.twinId} and c.embedding is not null
          order by c.embedding <=> ${vector}::vector
          limit ${limit * 3}
        )
        select c.id as "chunkId", c.file_id as "fileId", f.originalname, c.text, c.chunk_index as "chunkIndex",
          char_length(c.text) as length, f.confidential, (1 - c.distance)::float8 as score
        from nearest c
        join files f on f.id = c.file_id and f.generation = c.generation
        where ${scopeSql(scope)}
        order by c.distance, c.id
        limit ${limit}`,
    );
  });
}
