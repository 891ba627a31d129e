// The assistant a conversation turn runs on (behaviour 1): the requested one when the caller could
// pick it from the Assistants list in their current twin, otherwise the standard "New Conversation".
// Every conversation entry point (Socket.IO, SSE, voice, embedded visitors) calls resolveAssistant.
import type { Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { isObjectId } from '../../platform/ids/ids.js';
import { findPickableAssistant, findStandardAssistant } from './assistants.repo.js';
import type { ReasoningEffort } from '../../ai/registry.js';
import type { AssistantRow, AssistantToolMode } from './assistants.tables.js';
import { pickContextForActor } from './scope.js';
import { ensureSystemAssistants } from './seed.js';

export interface ResolvedAssistant {
  assistant: AssistantRow;
  /** True when the requested assistant was missing, out of scope or deleted (or none was asked for). */
  fallback: boolean;
  instructions: string;
  /** Model override by name; null: the twin's default model. */
  conversationModel: string | null;
  stsConversationModel: string | null;
  ragEnabled: boolean;
  /** Past exchanges to send; null: the caller's remember_history_count applies. */
  rememberHistory: number | null;
  bypassSystemContext: boolean;
  toolMode: AssistantToolMode;
  /** The tools it may use; null: every tool the twin enables. */
  tools: string[] | null;
  /** Assistants it may hand a task to (the delegate tool). */
  delegates: string[];
  /** null: the twin's reasoning effort applies. */
  stsReasoningEffort: ReasoningEffort | null;
  /** argument_1..argument_5, as stored. */
  arguments: string[];
}

/** `standard` reads New Conversation (a caller may serve it from a cache); by default from `db`. */
export async function resolveAssistant(
  db: Executor,
  actor: Actor,
  requestedId?: string | null,
  standard: () => Promise<AssistantRow> = () => standardAssistant(db),
): Promise<ResolvedAssistant> {
  if (isObjectId(requestedId)) {
    const ctx = await pickContextForActor(db, actor);
    const picked = await findPickableAssistant(db, ctx, requestedId);
    if (picked) return forEngine(picked, false);
  }
  return forEngine(await standard(), true);
}

/** New Conversation as a turn runs it, for a caller who may pick no other (an embedded page's visitor). */
export async function resolveStandardAssistant(standard: () => Promise<AssistantRow>): Promise<ResolvedAssistant> {
  return forEngine(await standard(), true);
}

export async function standardAssistant(db: Executor): Promise<AssistantRow> {
  const found = await findStandardAssistant(db);
  if (found) return found;
  // Seeded at start; re-seeded here should a database have lost it.
  await ensureSystemAssistants(db);
  const seeded = await findStandardAssistant(db);
  if (!seeded) throw new Error('the standard assistant could not be created');
  return seeded;
}

function forEngine(row: AssistantRow, fallback: boolean): ResolvedAssistant {
  return {
    assistant: row,
    fallback,
    instructions: row.instructions,
    conversationModel: row.conversationModel || null,
    stsConversationModel: row.stsConversationModel || null,
    ragEnabled: row.ragEnabled,
    rememberHistory: row.rememberHistory > 0 ? row.rememberHistory : null,
    bypassSystemContext: row.bypassSystemContext,
    toolMode: row.assistantToolMode,
    tools: row.tools,
    delegates: row.delegates,
    stsReasoningEffort: row.stsReasoningEffort,
    arguments: [row.argument1, row.argument2, row.argument3, row.argument4, row.argument5],
  };
}
