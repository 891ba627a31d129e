// What the service tells the provider of a voice session, from the turn's own pieces: the system text
// (turn-context.ts: the assistant's instructions, the twin's guardrails when on, recalled memories:
// personal ones only while the person's memory is on, shared ones always) and the turn's tools
// (turn-tools.ts: connectors behind their approval cards, opted-in built-ins, never one in
// toolsDisabled) as Realtime function tools.
import type { Actor } from '../../platform/http/actor.js';
import type { ResolvedAssistant } from '../assistants/resolver.js';
import type { MemoryEntry } from '../history/history.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { buildSystemText } from '../conversations/turn-context.js';
import type { TurnDeps } from '../conversations/turn-deps.js';
import { toolsForTurn, type TurnTools } from '../conversations/turn-tools.js';

export interface VoiceScene {
  actor: Actor;
  twin: TwinRow;
  assistant: ResolvedAssistant;
}

export async function voiceInstructions(deps: Pick<TurnDeps, 'providers'>, scene: VoiceScene): Promise<{ instructions: string; memories: MemoryEntry[] }> {
  const { assistant, twin } = scene;
  // No question yet: memories are recalled newest first within the turn's budget.
  const memories = assistant.bypassSystemContext ? [] : (await deps.providers.recall({ kind: 'person', actor: scene.actor }, '')).memories;
  const instructions = buildSystemText({
    instructions: assistant.instructions,
    guardrails: { enabled: twin.guardrailsEnabled, text: twin.guardrailsText },
    memories,
    passages: [],
  });
  return { instructions, memories };
}

/** The turn's tools for the record open now (its cards name that record). */
export function voiceTools(deps: Pick<TurnDeps, 'tools'>, scene: VoiceScene, record: { id: string; conversationId: string }, approvalTimeoutMs: number, signal: AbortSignal): Promise<TurnTools> {
  return toolsForTurn(deps.tools, {
    actor: scene.actor,
    twin: scene.twin,
    assistant: scene.assistant,
    historyId: record.id,
    conversationId: record.conversationId,
    modelKind: 'endpoint',
    origin: 'voice',
    approvalTimeoutMs,
    signal,
  });
}

/** A Realtime `session.tools` entry. */
export interface RealtimeFunctionTool {
  type: 'function';
  name: string;
  description: string;
  parameters: object;
}

export const realtimeToolsOf = (tools: TurnTools): RealtimeFunctionTool[] =>
  tools.specs.map((spec) => ({ type: 'function', name: spec.key, description: spec.description, parameters: spec.inputSchema }));
