// Recall for a conversation turn (text and voice): which memory parameters go into the system context.
// Shared rows of the twin always; the person's personal rows only while Enable User Memory is on
// (behaviour 7). All of them when they fit the token budget, else the most relevant that fit.
import { estimateTokens } from '../../ai/prompt.js';
import type { Executor } from '../../platform/db/client.js';
import { listRecallable } from './memory.repo.js';
import type { MemoryRow } from './memory.tables.js';

export interface RecalledMemory {
  id: string;
  key: string;
  value: string;
  shared: boolean;
}

export interface RecallScope {
  userId: string;
  twinId: string;
  /**
   * The person's Enable User Memory switch (users.user_memory_enabled), or 'as-set': read by the recall's
   * own statement (a turn recalls beside its read of the person, not after it).
   */
  userMemoryEnabled: boolean | 'as-set';
}

export interface RecallOptions {
  /** Tokens the recalled memories may take in the system context (estimated as characters / 4). */
  tokenBudget?: number;
  /** Where the rows to choose from come from (a turn's cache: conversations/context-reads.ts); the database by default. */
  candidates?: (limit: number) => Promise<readonly MemoryRow[]>;
}

/** Rows read per turn at most; a twin's memory beyond this is not considered (newest first). */
const CANDIDATE_LIMIT = 1_000;

const STOP_WORDS = new Set(
  'a an and are as at be but by can do does for from had has have how i in is it its me my of on or our so that the their them they this to was we what when where which who why will with you your'.split(' '),
);

/** The text one memory takes in the context: `key: value`. */
export function memoryLine(memory: Pick<RecalledMemory, 'key' | 'value'>): string {
  return `${memory.key}: ${memory.value}`;
}

/** The memory lines for `formatContextSections({ memories })` of src/ai/prompt.ts. */
export function memoryLines(memories: readonly RecalledMemory[]): string[] {
  return memories.map(memoryLine);
}

export async function recallForTurn(
  db: Executor,
  scope: RecallScope,
  question: string,
  { tokenBudget = 800, candidates }: RecallOptions = {},
): Promise<{ memories: RecalledMemory[] }> {
  const rows = candidates ? await candidates(CANDIDATE_LIMIT) : await listRecallable(db, scope.twinId, scope.userId, scope.userMemoryEnabled, CANDIDATE_LIMIT);
  return { memories: selectWithinBudget(rows, question, tokenBudget).map(toRecalled) };
}

/** Rows come newest first; the order is kept when all fit, else most relevant first (ties: newest). */
export function selectWithinBudget(rows: readonly MemoryRow[], question: string, tokenBudget: number): MemoryRow[] {
  const cost = (row: MemoryRow): number => estimateTokens(memoryLine({ key: row.keyName, value: row.keyValue })) + 4;
  const total = rows.reduce((sum, row) => sum + cost(row), 0);
  if (total <= tokenBudget) return [...rows];
  const asked = new Set(words(question));
  const ranked = rows
    .map((row, recency) => ({ row, recency, score: relevance(asked, row) }))
    .sort((a, b) => b.score - a.score || a.recency - b.recency);
  const chosen: MemoryRow[] = [];
  let used = 0;
  for (const { row } of ranked) {
    const next = cost(row);
    if (used + next > tokenBudget) continue;
    chosen.push(row);
    used += next;
  }
  return chosen;
}

/** How many distinct words of the question the memory's key, value and description hold. */
function relevance(asked: ReadonlySet<string>, row: MemoryRow): number {
  if (asked.size === 0) return 0;
  const held = new Set(words(`${row.keyName} ${row.keyValue} ${row.keyDescription}`));
  let score = 0;
  for (const word of asked) if (held.has(word)) score += 1;
  return score;
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word))
    .map((word) => (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word));
}

function toRecalled(row: MemoryRow): RecalledMemory {
  return { id: row.id, key: row.keyName, value: row.keyValue, shared: row.shared };
}
