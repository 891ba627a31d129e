// Retrieval over the files vault: full text everywhere, fused with pgvector nearest neighbours by
// reciprocal rank fusion where the extension exists. Entries come out in the spec's shape with
// confidential chunks already redacted, so nothing downstream can store or show more.
import type { DatabaseHandle } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { createLocalEmbedder, type Embedder } from '../../ai/embeddings.js';
import { checkAccess } from '../access/access.js';
import { searchFullText, searchVector, type ChunkHit, type SearchScope } from './chunks.repo.js';
import { redactConfidential } from '../history/history.detail.js';
import type { RetrievalEntry } from '../history/history.tables.js';

// One redaction rule and one entry shape for search results and history records alike.
export { CONFIDENTIAL_PREVIEW_CHARS, CONFIDENTIAL_SUFFIX as REDACTION_SUFFIX, redactConfidential } from '../history/history.detail.js';
export type { RetrievalEntry } from '../history/history.tables.js';

export const DEFAULT_RETRIEVAL_MODE = 'RAG';
/** Reciprocal rank fusion constant (the usual 60). */
const RRF_K = 60;
const MAX_LIMIT = 50;

export interface RetrievalSetup {
  embedder: Embedder;
  /** True when the vector column is in place (pgvector present, dimensions agree). */
  hybrid: boolean;
}

const setups = new WeakMap<DatabaseHandle, RetrievalSetup>();

/** Called once by the files module at start; searchForTurn then knows the embedder and the mode. */
export function registerRetrieval(database: DatabaseHandle, setup: RetrievalSetup): void {
  setups.set(database, setup);
}

export function retrievalSetupOf(database: DatabaseHandle): RetrievalSetup {
  return setups.get(database) ?? { embedder: createLocalEmbedder(), hybrid: false };
}

/** Fuses ranked lists: each hit scores the sum of 1/(k + rank) over the lists it appears in. */
export function reciprocalRankFusion(lists: ChunkHit[][], limit: number): ChunkHit[] {
  const fused = new Map<string, { hit: ChunkHit; score: number }>();
  for (const list of lists) {
    list.forEach((hit, rank) => {
      const entry = fused.get(hit.chunkId) ?? { hit, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.chunkId, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.hit.chunkId.localeCompare(b.hit.chunkId))
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score }));
}

export function toEntry(hit: ChunkHit, mode: string): RetrievalEntry {
  return {
    uploadId: hit.fileId,
    originalname: hit.originalname,
    chunkText: hit.confidential ? redactConfidential(hit.text) : hit.text,
    chunkIndex: Number(hit.chunkIndex),
    length: Number(hit.length),
    score: Number(hit.score),
    mode,
    confidential: Boolean(hit.confidential),
  };
}

export async function searchScopeFor(database: DatabaseHandle, actor: Actor): Promise<SearchScope | null> {
  const twinId = actor.launchScope?.twinId ?? actor.twinId;
  if (!twinId) return null;
  const includeShared = await checkAccess(database.db, actor, 'files.access', { twin: twinId });
  return { twinId, userId: actor.userId, includeShared };
}

/**
 * Whether the actor's search in their twin could find anything: a file of theirs that search sees, or a
 * shared one when they hold files.access. A turn asks this first, so a person without files pays nothing;
 * `lookup` gives the two answers (files.repo.ts `searchableFilesOf`, or a turn's cache: conversations/context-reads.ts).
 */
export async function hasSearchableFiles(
  database: DatabaseHandle,
  actor: Actor,
  lookup: (twinId: string, userId: string) => Promise<{ own: boolean; shared: boolean }>,
): Promise<boolean> {
  const twinId = actor.launchScope?.twinId ?? actor.twinId;
  if (!twinId) return false;
  const found = await lookup(twinId, actor.userId);
  if (found.own) return true;
  return found.shared && ((await searchScopeFor(database, actor))?.includeShared ?? false);
}

export async function searchChunks(
  database: DatabaseHandle,
  scope: SearchScope,
  query: string,
  limit: number,
  signal?: AbortSignal,
): Promise<ChunkHit[]> {
  const { embedder, hybrid } = retrievalSetupOf(database);
  if (!hybrid) return searchFullText(database.db, scope, query, limit);
  const candidates = Math.max(limit * 4, 20);
  const [[embedding], textHits] = await Promise.all([
    embedder.embed([query], signal),
    searchFullText(database.db, scope, query, candidates),
  ]);
  const lexical = new Set(textHits.map((hit) => hit.chunkId));
  const vectorHits = (await searchVector(database.db, scope, embedding, candidates)).filter(
    (hit) => lexical.has(hit.chunkId) || hit.score >= embedder.minSimilarity,
  );
  return reciprocalRankFusion([textHits, vectorHits], limit);
}

/**
 * What the conversation engine calls for a turn: the passages the actor may read that best match
 * the query, as retrieval entries (confidential ones redacted), best first. No twin, no passages.
 */
export async function searchForTurn(
  database: DatabaseHandle,
  actor: Actor,
  query: string,
  options: { limit?: number; mode?: string; signal?: AbortSignal } = {},
): Promise<RetrievalEntry[]> {
  const scope = await searchScopeFor(database, actor);
  if (!scope || !query.trim()) return [];
  const limit = Math.min(Math.max(1, options.limit ?? 5), MAX_LIMIT);
  const hits = await searchChunks(database, scope, query, limit, options.signal);
  return hits.map((hit) => toEntry(hit, options.mode ?? DEFAULT_RETRIEVAL_MODE));
}
