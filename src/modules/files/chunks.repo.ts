// SQL of the chunks table: generation bookkeeping for atomic ingestion, full-text and vector search.
// The `embedding` column exists only where pgvector does (ensureVectorSchema), so it is written and
// read with plain SQL rather than through the drizzle table.
import { sql, type SQL } from 'drizzle-orm';
import type { DatabaseHandle, Executor } from '../../platform/db/client.js';
import { newId } from '../../platform/ids/ids.js';

export interface ChunkInsert {
  institutionId: string;
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

/** Who may see which files in a search: own files of the twin, plus shared ones with files.access. */
export interface SearchScope {
  institutionId: string;
  userId: string;
  includeShared: boolean;
}

async function rows<T>(db: Executor, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

const vectorLiteral = (values: number[]) => `[${values.map((v) => (Number.isFinite(v) ? v : 0)).join(',')}]`;

/**
 * Adds the vector column and its HNSW index where pgvector exists. Idempotent; safe when several
 * processes start at once. Returns false (full-text only) when the column has another dimension.
 */
export async function ensureVectorSchema(database: DatabaseHandle, dimensions: number): Promise<{ ready: boolean; reason?: string }> {
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

/** Removes rows of every generation but `keep` (crashed or superseded ingestions). */
export async function deleteChunksExcept(db: Executor, fileId: string, keep: number): Promise<void> {
  await db.execute(sql`delete from file_chunks where file_id = ${fileId} and generation <> ${keep}`);
}

export async function insertChunks(db: Executor, chunks: ChunkInsert[], withEmbedding: boolean): Promise<void> {
  if (chunks.length === 0) return;
  const values = chunks.map((c) =>
    withEmbedding && c.embedding
      ? sql`(${newId()}, ${c.institutionId}, ${c.fileId}, ${c.generation}, ${c.chunkIndex}, ${c.text}, ${vectorLiteral(c.embedding)}::vector)`
      : sql`(${newId()}, ${c.institutionId}, ${c.fileId}, ${c.generation}, ${c.chunkIndex}, ${c.text})`,
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

/** The words of a question OR-ed: a chat question rarely has every word in one passage. */
export function orQuery(text: string): string | null {
  const words = [...new Set(text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);
  return words.length ? words.join(' | ') : null;
}

const scopeSql = (scope: SearchScope) =>
  scope.includeShared
    ? sql`f.institution_id = ${scope.institutionId} and (f.user_id = ${scope.userId} or f.shared)`
    : sql`f.institution_id = ${scope.institutionId} and f.user_id = ${scope.userId}`;

const hitColumns = sql`c.id as "chunkId", c.file_id as "fileId", f.originalname, c.text, c.chunk_index as "chunkIndex",
  char_length(c.text) as length, f.confidential`;

export async function searchFullText(db: Executor, scope: SearchScope, query: string, limit: number): Promise<ChunkHit[]> {
  const tsquery = orQuery(query);
  if (!tsquery) return [];
  return rows<ChunkHit>(
    db,
    sql`select ${hitColumns}, ts_rank_cd(c.tsv, q)::float8 as score
      from to_tsquery('english', ${tsquery}) q, file_chunks c
      join files f on f.id = c.file_id and f.generation = c.generation
      where c.institution_id = ${scope.institutionId} and c.tsv @@ q and ${scopeSql(scope)}
      order by score desc, c.id
      limit ${limit}`,
  );
}

export async function searchVector(db: Executor, scope: SearchScope, embedding: number[], limit: number): Promise<ChunkHit[]> {
  const vector = vectorLiteral(embedding);
  return rows<ChunkHit>(
    db,
    sql`select ${hitColumns}, (1 - (c.embedding <=> ${vector}::vector))::float8 as score
      from file_chunks c
      join files f on f.id = c.file_id and f.generation = c.generation
      where c.institution_id = ${scope.institutionId} and c.embedding is not null and ${scopeSql(scope)}
      order by c.embedding <=> ${vector}::vector
      limit ${limit}`,
  );
}

