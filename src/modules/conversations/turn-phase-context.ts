// The turn's second phase, context: the system text (the assistant's instructions, the twin's guardrails,
// recalled memories and retrieved passages: turn-context.ts) and the earlier exchanges of the
// conversation, then the rest of the hold when the prompt is larger than the opening allowed for. Its
// reads start beside the record's opening (startContextReads), each reading the setting it depends on in
// its own statement: the memories (the Enable User Memory switch), the exchanges (the assistant's
// remember_history, else the person's count), whether the caller has a file to search.
import type { ModelMessage } from 'ai';
import { promptTokenBound } from '../../ai/prompt.js';
import type { ClampedReasoningEffort } from '../../ai/registry.js';
import type { ResolvedAssistant } from '../assistants/resolver.js';
import { recentExchanges, type Exchange } from '../history/history.records.js';
import type { GuidanceEntry, MemoryEntry, RetrievalEntry } from '../history/history.tables.js';
import { claimGuidance } from '../embed/guidance.repo.js';
import { holdOf, isPriced, type HeldRecord } from './turn-billing.js';
import { buildSystemText } from './turn-context.js';
import type { TurnDeps } from './turn-deps.js';
import { reasoningFor } from './turn-model.js';
import type { TwinRow } from '../twins/twins.tables.js';
import type { ModelChoice } from './turn-model.js';
import { embedSessionOf, type Asker, type TurnCaller, type TurnInput, type TurnSink } from './turn-types.js';

/** The name of the retrieval step in `tool` frames. */
export const RETRIEVAL_TOOL = 'retrieval';

/** The context reads under way while the record opens. */
export interface EarlyContext {
  memories: Promise<MemoryEntry[]>;
  exchanges: Promise<Exchange[]>;
  searchable: Promise<boolean>;
}

/** What the run sends the model, and what the record keeps of it. */
export interface TurnContext {
  system: string;
  messages: ModelMessage[];
  memories: MemoryEntry[];
  passages: RetrievalEntry[];
  /** The embedding page's guidance this turn follows (kept on its record, never as the person's words). */
  guidance: GuidanceEntry[];
  effort: ClampedReasoningEffort | undefined;
}

export interface ReadsFor {
  caller: TurnCaller;
  asker: Asker;
  input: TurnInput;
  question: string;
  assistant: ResolvedAssistant;
}

/**
 * Starts the context reads beside the opening. Exchanges count only if the turn really continues that
 * conversation (its asker's, in this twin), and only finished exchanges are read, so the new record is
 * never among them. Retrieval (the assistant's ragEnabled, or ragOnly) runs only when the caller has a
 * file to search; a failed answer counts as searchable (the search itself then fails or finds).
 */
export function startContextReads(deps: TurnDeps, turn: ReadsFor): EarlyContext {
  const { caller, input, question, assistant } = turn;
  const useContext = !assistant.bypassSystemContext;
  const memories = useContext ? deps.providers.recall(caller, question).then((recalled) => recalled.memories) : Promise.resolve<MemoryEntry[]>([]);
  const exchanges = input.conversationId ? recentExchanges(deps.db, input.conversationId, turn.asker.id, assistant.rememberHistory ?? 'as-set') : Promise.resolve([]);
  const searchable =
    useContext && (assistant.ragEnabled || input.ragOnly) ? (deps.providers.searchable?.(caller) ?? Promise.resolve(true)).catch(() => true) : Promise.resolve(false);
  for (const read of [memories, exchanges]) read.catch(() => {}); // awaited by gatherContext, unless the turn is refused
  return { memories, exchanges, searchable };
}

/** What the context phase needs of an admitted turn (turn-phase-admit.ts, AdmittedTurn). */
export interface ContextTurn extends ReadsFor {
  twin: Pick<TwinRow, 'id' | 'guardrailsEnabled' | 'guardrailsText' | 'reasoningEffort' | 'embedGuidanceEnabled'>;
  choice: Pick<ModelChoice, 'price' | 'custom'>;
  openingInputBound: number;
  held: HeldRecord;
  early: EarlyContext;
}

export async function gatherContext(deps: TurnDeps, turn: ContextTurn, sink: TurnSink): Promise<TurnContext> {
  const { early, twin, question, held } = turn;
  const continued = held.record.conversationId === turn.input.conversationId;
  // Retrieval shows as a tool of the turn, so it starts once the turn has (after onStart).
  const [memories, passages, exchanges, guidance] = await Promise.all([
    early.memories,
    early.searchable.then((worth) => (worth ? retrieveWithFrames(deps, turn, sink) : ([] as RetrievalEntry[]))),
    continued ? early.exchanges : [],
    guidanceFor(deps, turn),
  ]);
  const system = withGuidance(
    buildSystemText({
      instructions: turn.assistant.instructions,
      guardrails: { enabled: twin.guardrailsEnabled, text: twin.guardrailsText },
      memories,
      passages,
      ragOnly: turn.input.ragOnly,
    }),
    guidance,
  );
  const messages: ModelMessage[] = [];
  for (const exchange of exchanges) messages.push({ role: 'user', content: exchange.question }, { role: 'assistant', content: exchange.answer });
  messages.push({ role: 'user', content: question });
  if (isPriced(turn.choice.price)) {
    // The context is known now: a prompt larger than the opening allowed for holds the rest first.
    const inputBound = promptTokenBound([system, ...messages.map((message) => String(message.content))]);
    if (inputBound > turn.openingInputBound) await held.extend(holdOf(inputBound - turn.openingInputBound, 0, turn.choice.price));
  }
  return { system, messages, memories, passages, guidance, effort: reasoningFor(twin.reasoningEffort, turn.choice.custom) };
}

/**
 * Retrieval is the turn's first tool: the transport shows it (SSE `tool` frames, started then completed
 * or failed). A failed search does not sink the turn; it answers without passages.
 */
async function retrieveWithFrames(deps: TurnDeps, turn: ReadsFor, sink: TurnSink): Promise<RetrievalEntry[]> {
  sink.onTool(RETRIEVAL_TOOL, 'started');
  try {
    const passages = await deps.providers.retrieve(turn.caller, turn.question, { ragOnly: turn.input.ragOnly ?? false });
    sink.onTool(RETRIEVAL_TOOL, 'completed');
    return passages;
  } catch (error) {
    sink.onTool(RETRIEVAL_TOOL, 'failed');
    deps.log.warn({ err: error }, 'retrieval failed; the turn answers without passages');
    return [];
  }
}

/**
 * Behaviour 14: what the embedding page sent since this embed session's last turn, claimed by this turn.
 * Read only for an embed session of a twin whose guidance is on (the switch is checked again here, so
 * guidance sent before it went off steers nothing); every other turn reads nothing more.
 */
function guidanceFor(deps: TurnDeps, turn: ContextTurn): Promise<GuidanceEntry[]> {
  const sessionId = embedSessionOf(turn.caller);
  if (!sessionId || !turn.twin.embedGuidanceEnabled) return Promise.resolve([]);
  return claimGuidance(deps.db, { twinId: turn.twin.id, sessionId });
}

/** The guidance as a part of the system text: the operator's steer, not the person's words. */
export function withGuidance(system: string, guidance: readonly GuidanceEntry[]): string {
  if (guidance.length === 0) return system;
  const lines = guidance.map((entry) => `- ${entry.text}`).join('\n');
  return `${system}\n\nGuidance from the page this conversation is embedded in (follow it in your next answer; it is not the user's message):\n${lines}`;
}
