// The run of a chat turn (both transports): the model's text stream with the turn's tools (connectors
// with their approvals, opted-in built-ins, and `delegate`, whose subagents hold more on the same record
// and are charged in the same settle: subagents.ts). The part of a turn each kind differs in; a voice
// session's run would stream audio here instead, with the same admit, context and settle around it.
import { toToolSet } from '../../ai/tools/turn-tools.js';
import type { Actor } from '../../platform/http/actor.js';
import { streamAnswer } from './stream-turn.js';
import { costOf, isPriced } from './turn-billing.js';
import type { TurnDeps } from './turn-deps.js';
import type { AdmittedTurn } from './turn-phase-admit.js';
import type { TurnContext } from './turn-phase-context.js';
import { personTools } from './person-tools.js';
import { newTally, type SubagentTally } from './subagents.js';
import type { TurnTools } from './turn-tools.js';
import type { RunOutcome, TurnSink } from './turn-types.js';

export async function runChat(deps: TurnDeps, turn: AdmittedTurn, context: TurnContext, sink: TurnSink): Promise<RunOutcome> {
  const { choice } = turn;
  const tally = newTally();
  const tools = turn.caller.kind === 'person' ? await chatTools(deps, turn, turn.caller.actor, tally, sink) : undefined;
  const record = turn.held.record;
  const result = await streamAnswer({
    model: choice.resolved,
    system: context.system || undefined,
    messages: context.messages,
    reasoningEffort: context.effort,
    // A priced turn never answers past what it holds for.
    maxOutputTokens: isPriced(choice.price) ? turn.outputLimit : choice.custom?.maxTokens,
    signal: sink.signal,
    onDelta: (delta, soFar) => {
      deps.journal.progress(record.id, soFar);
      sink.onDelta(delta, soFar);
    },
    ...(tools && tools.specs.length > 0 ? { tools: await toToolSet(tools.specs, (name, status) => sink.onTool(name, status)), toolChoice: tools.toolChoice } : {}),
  });
  // What the subagents used is the turn's too: on its record and in its charge.
  return {
    text: result.text,
    cancelled: result.cancelled,
    emptyReply: result.emptyReply,
    ...(result.failed ? { failed: result.failed } : {}),
    usage: { inputTokens: result.usage.inputTokens + tally.usage.inputTokens, outputTokens: result.usage.outputTokens + tally.usage.outputTokens },
    cost: costOf(result.usage, choice.price) + tally.cost,
    models: [result.modelId, ...tally.entries.map((entry) => entry.model ?? '').filter((model) => model && model !== result.modelId)],
    toolCalls: [...(tools?.calls ?? []), ...tally.calls],
    subagents: tally.entries,
  };
}

/** The turn's tools for a person: connectors (with their approvals), delegated subagents, opted-in built-ins. */
function chatTools(deps: TurnDeps, turn: AdmittedTurn, actor: Actor, tally: SubagentTally, sink: TurnSink): Promise<TurnTools> {
  return personTools(
    deps,
    {
      actor,
      twin: turn.twin,
      assistant: turn.assistant,
      held: turn.held,
      modelKind: turn.choice.resolved.kind,
      origin: 'chat',
      approvalTimeoutMs: deps.approvalTimeoutMs,
      signal: sink.signal,
      numberApproval: sink.onApproval,
    },
    tally,
  );
}
