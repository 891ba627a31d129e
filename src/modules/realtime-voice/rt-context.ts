// What the service tells the provider of a voice session, from the turn's own pieces: the system text
// (turn-context.ts: the assistant's instructions, the twin's guardrails when on, recalled memories:
// personal ones only while the person's memory is on, shared ones always) and the turn's tools
// (turn-tools.ts: connectors behind their approval cards, opted-in built-ins, `delegate` to the
// assistant's subagents as a chat turn offers it (subagents.ts), never one in toolsDisabled) as Realtime
// function tools.
import type { Actor } from '../../platform/http/actor.js';
import type { ResolvedAssistant } from '../assistants/resolver.js';
import type { MemoryEntry } from '../history/history.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { buildSystemText } from '../conversations/turn-context.js';
import type { TurnDeps } from '../conversations/turn-deps.js';
import { personTools, type PersonToolDeps } from '../conversations/person-tools.js';
import type { SubagentTally } from '../conversations/subagents.js';
import type { TurnTools } from '../conversations/turn-tools.js';
import type { HeldRecord } from '../conversations/turn-billing.js';

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

/**
 * The turn's tools for the exchange's record open now (its cards name that record): a chat turn's,
 * `delegate` included, whose subagents hold more on that record and add what they use to `tally` (the
 * exchange's record and charge carry it, as a chat turn's do).
 */
export function voiceTools(deps: PersonToolDeps, scene: VoiceScene, held: HeldRecord, tally: SubagentTally, approvalTimeoutMs: number, signal: AbortSignal): Promise<TurnTools> {
  const { actor, twin, assistant } = scene;
  return personTools(deps, { actor, twin, assistant, held, modelKind: 'endpoint', origin: 'voice', approvalTimeoutMs, signal }, tally);
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
