// Pure rules on the working detail of a history record: the confidential preview of retrieval
// entries, the counts kept with a record, and the marker that replaces expired text (behaviour 4).
import type { MemoryEntry, RetrievalEntry, SubagentEntry, ToolCallEntry } from './history.tables.js';

/** Working detail expires this long after the conversation's last activity. */
export const DETAIL_RETENTION_DAYS = 180;
/** The text expired working detail shows (spec, behaviour 4). */
export const DETAILS_EXPIRED_TEXT = 'Details expired after 180 days';

/** Confidential chunks show at most this many characters (spec limit "Confidential chunk preview"). */
export const CONFIDENTIAL_PREVIEW_CHARS = 100;
/** Appended when a confidential chunk was longer than the preview. */
export const CONFIDENTIAL_SUFFIX = '… [confidential]';

/**
 * The preview of a confidential chunk: the first 100 characters, plus the suffix when the text was
 * longer. Idempotent, so text the files module already redacted passes through unchanged.
 */
export function redactConfidential(text: string): string {
  const chars = Array.from(text); // by code point, so a surrogate pair is never split
  if (chars.length <= CONFIDENTIAL_PREVIEW_CHARS) return text;
  if (text.endsWith(CONFIDENTIAL_SUFFIX) && chars.length - Array.from(CONFIDENTIAL_SUFFIX).length <= CONFIDENTIAL_PREVIEW_CHARS) {
    return text;
  }
  return chars.slice(0, CONFIDENTIAL_PREVIEW_CHARS).join('') + CONFIDENTIAL_SUFFIX;
}

/** Retrieval entries as stored: confidential chunk text is never kept beyond its preview. */
export function storableRetrieval(entries: readonly RetrievalEntry[]): RetrievalEntry[] {
  return entries.map((entry) => ({
    uploadId: entry.uploadId,
    originalname: entry.originalname,
    chunkText: entry.confidential ? redactConfidential(entry.chunkText) : entry.chunkText,
    chunkIndex: entry.chunkIndex,
    length: entry.length,
    score: entry.score,
    mode: entry.mode,
    confidential: entry.confidential,
  }));
}

/** The retrieval mode a record shows in lists: the mode of its entries (RAG), or null without any. */
export function retrievalMode(entries: readonly RetrievalEntry[], given?: string | null): string | null {
  if (given) return given;
  return entries[0]?.mode ?? null;
}

export interface DetailCounts {
  toolCallCount: number;
  subagentCount: number;
  ragSearchCount: number;
  memoryCount: number;
}

export function detailCounts(detail: {
  toolCalls: readonly ToolCallEntry[];
  subagents: readonly SubagentEntry[];
  ragSearch: readonly RetrievalEntry[];
  memories: readonly MemoryEntry[];
}): DetailCounts {
  return {
    toolCallCount: detail.toolCalls.length,
    subagentCount: detail.subagents.length,
    ragSearchCount: detail.ragSearch.length,
    memoryCount: detail.memories.length,
  };
}
