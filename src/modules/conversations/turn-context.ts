// The system text of a turn: the assistant's instructions, the twin's guardrail text when it is on
// (behaviour 8, every assistant), then recalled memories and retrieved passages. Memory and retrieval
// come through TurnContextProviders, which the memory and files modules fill in (default: nothing).
import { formatContextSections } from '../../ai/prompt.js';
import type { MemoryEntry, RetrievalEntry } from '../history/history.tables.js';
import type { TurnCaller } from './turn-types.js';

export interface RecalledMemories {
  memories: MemoryEntry[];
}

/** What the turn has already read about the twin, so providers need not read it again. */
export interface TurnScene {
  /** The twin's long-term memory setting. */
  longTermMemoryEnabled: boolean;
}

/** What the memory and files modules provide to a turn. Both may return nothing. */
export interface TurnContextProviders {
  /** Personal memories only while the person's switch is on, as the recall's own read finds it (behaviour 7). */
  recall(caller: TurnCaller, question: string): Promise<RecalledMemories>;
  retrieve(caller: TurnCaller, question: string, options: { ragOnly: boolean }): Promise<RetrievalEntry[]>;
  /**
   * Whether retrieval could find anything for the caller (a file they may search exists). Asked beside the
   * turn's opening; false skips retrieval and its frames. Absent: always searched.
   */
  searchable?(caller: TurnCaller): Promise<boolean>;
  /**
   * After a turn that produced an answer (long-term memory extraction). The turn does not wait for it:
   * it must not reject. It settles once done (with the queued job's id, or null when nothing was queued).
   */
  afterTurn?(caller: TurnCaller, turn: { historyId: string; question: string; answer: string }, scene: TurnScene): Promise<string | null>;
}

export const emptyContextProviders: TurnContextProviders = {
  recall: async () => ({ memories: [] }),
  retrieve: async () => [],
};

export const GUARDRAILS_HEADING = '## Guardrails (these instructions always apply)';

export interface SystemTextInput {
  instructions: string;
  guardrails: { enabled: boolean; text: string };
  memories: MemoryEntry[];
  passages: RetrievalEntry[];
  /** Answer only from the retrieved passages (the SSE route's ragOnly). */
  ragOnly?: boolean;
}

export const RAG_ONLY_HEADING = '## Answer only from the passages';
const RAG_ONLY_RULE =
  'Answer only from the passages from the files below. If they do not hold the answer, say that the files ' +
  'hold nothing about it, and do not answer from general knowledge.';

/** The system text sent with the turn ('' when there is nothing to say). */
export function buildSystemText(input: SystemTextInput): string {
  const blocks: string[] = [];
  if (input.instructions.trim()) blocks.push(input.instructions.trim());
  if (input.guardrails.enabled && input.guardrails.text.trim()) blocks.push(`${GUARDRAILS_HEADING}\n${input.guardrails.text.trim()}`);
  const sections = formatContextSections({
    passages: input.passages.map((entry) => entry.chunkText),
    memories: input.memories.map((memory) => `${memory.key}: ${memory.value}`),
  });
  if (input.ragOnly) blocks.push(`${RAG_ONLY_HEADING}\n${RAG_ONLY_RULE}`);
  if (sections) blocks.push(sections);
  return blocks.join('\n\n');
}
