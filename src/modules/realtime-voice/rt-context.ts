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
import { delegateRunner, type SubagentModel, type SubagentTally } from '../conversations/subagents.js';
import { chooseModel } from '../conversations/turn-model.js';
import { toolsForTurn, type TurnTools } from '../conversations/turn-tools.js';
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

type VoiceToolDeps = Pick<TurnDeps, 'db' | 'tools' | 'secrets' | 'models' | 'deploymentModel' | 'outbound' | 'deploymentPrice' | 'subscriptionModel'>;

/**
 * The turn's tools for the exchange's record open now (its cards name that record): a chat turn's,
 * `delegate` included, whose subagents hold more on that record and add what they use to `tally` (the
 * exchange's record and charge carry it, as a chat turn's do).
 */
export async function voiceTools(deps: VoiceToolDeps, scene: VoiceScene, held: HeldRecord, tally: SubagentTally, approvalTimeoutMs: number, signal: AbortSignal): Promise<TurnTools> {
  const { actor, twin, assistant } = scene;
  const record = held.record;
  const delegate =
    assistant.delegates.length > 0
      ? await delegateRunner(
          {
            db: deps.db,
            tools: deps.tools,
            actor,
            twin: { id: twin.id, toolsDisabled: twin.toolsDisabled, guardrails: twin.guardrailsEnabled ? twin.guardrailsText : '' },
            parentId: assistant.assistant.id,
            delegates: assistant.delegates,
            historyId: record.id,
            conversationId: record.conversationId,
            modelFor: async (sub): Promise<SubagentModel> => {
              const choice = await chooseModel(deps, twin.id, sub);
              return { resolved: choice.resolved, price: choice.price, outputLimit: choice.custom?.maxTokens ?? twin.maxCompletionTokens };
            },
            reserve: (extra) => held.extend(extra),
            signal,
          },
          tally,
        )
      : undefined;
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
    delegate,
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
