// Delegated subagents: an assistant's `delegates` are the assistants it may hand a task to through the
// `delegate` tool. A subagent runs its own tool loop (its instructions, model and tools; the same twin and
// person) with a step limit; its approvals go to the same person and wait up to three minutes; what it
// uses is charged with the turn to the same payer, after holding its most expensive cost first. Steps:
// each tool call it makes, and its answer; failed steps: calls declined, expired, cancelled or failed,
// and the answer when its model failed. Its run (transcript, steps, tokens, credits) is kept on the
// history record, the transcript as working detail.
import type { ModelMessage } from 'ai';
import type { ResolvedModel } from '../../ai/registry.js';
import { toToolSet } from '../../ai/tools/turn-tools.js';
import { promptTokenBound } from '../../ai/prompt.js';
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { newId } from '../../platform/ids/ids.js';
import { resolveAssistant, type ResolvedAssistant } from '../assistants/resolver.js';
import type { SubagentEntry, SubagentMessage, ToolCallEntry } from '../history/history.tables.js';
import type { NumberApprovalFrame } from '../approvals/approval-gate.js';
import { streamAnswer } from './stream-turn.js';
import { costOf, holdOf, isPriced, type Price } from './turn-billing.js';
import { toolsForTurn, type DelegateRunner, type TurnToolDeps } from './turn-tools.js';

export const SUBAGENT_MAX_STEPS = 5;
/** The spec: a delegated agent waits up to three minutes for a decision. */
export const SUBAGENT_APPROVAL_TIMEOUT_MS = 180_000;

export interface SubagentModel {
  resolved: ResolvedModel;
  price: Price;
  outputLimit: number;
}

/** What the turn gives its subagents. */
export interface SubagentScene {
  db: Database;
  tools: TurnToolDeps;
  actor: Actor;
  twin: { id: string; toolsDisabled: readonly string[]; guardrails?: string };
  parentId: string;
  delegates: readonly string[];
  historyId: string;
  conversationId: string;
  /** The model an assistant runs on (the turn's own choice rule). */
  modelFor(assistant: ResolvedAssistant): Promise<SubagentModel>;
  /** Holds `extra` more credits for the turn before a subagent runs; throws when the balance cannot. */
  reserve(extra: number): Promise<void>;
  signal?: AbortSignal;
  /** The turn's answer numbering, for the subagents' approval cards. */
  numberApproval?: NumberApprovalFrame;
}

/** What the subagents of a turn used, for its record and its charge. */
export interface SubagentTally {
  entries: SubagentEntry[];
  calls: ToolCallEntry[];
  usage: { inputTokens: number; outputTokens: number };
  cost: number;
}

export const newTally = (): SubagentTally => ({ entries: [], calls: [], usage: { inputTokens: 0, outputTokens: 0 }, cost: 0 });

/** The delegate tool's runner for a turn, or undefined when the assistant may delegate to nobody. */
export async function delegateRunner(scene: SubagentScene, tally: SubagentTally): Promise<DelegateRunner | undefined> {
  const ids = [...new Set(scene.delegates)].filter((id) => id !== scene.parentId);
  if (ids.length === 0) return undefined;
  const resolved = await Promise.all(ids.map((id) => resolveAssistant(scene.db, scene.actor, id)));
  // Only assistants the person could pick themselves, in their current twin (behaviour 1).
  const usable = resolved.filter((candidate) => !candidate.fallback);
  if (usable.length === 0) return undefined;
  const byId = new Map(usable.map((candidate) => [candidate.assistant.id, candidate]));
  return {
    candidates: usable.map(({ assistant }) => ({ id: assistant.id, name: assistant.name, description: assistant.description })),
    run: async (assistantId, task, signal) => {
      const assistant = byId.get(assistantId);
      if (!assistant) return { text: `No assistant ${assistantId} may take this task.`, failed: true };
      return runSubagent(scene, assistant, task, tally, signal ?? scene.signal);
    },
  };
}

async function runSubagent(scene: SubagentScene, assistant: ResolvedAssistant, task: string, tally: SubagentTally, signal?: AbortSignal) {
  const started = Date.now();
  const model = await scene.modelFor(assistant);
  const system = [assistant.instructions, scene.twin.guardrails].filter(Boolean).join('\n\n');
  const transcript: SubagentMessage[] = [{ role: 'user', content: task }];
  const entry: SubagentEntry = {
    id: newId(),
    assistantId: assistant.assistant.id,
    name: assistant.assistant.name,
    model: model.resolved.modelId,
    task,
    transcript,
    status: 'complete',
    steps: 0,
    failedSteps: 0,
  };
  tally.entries.push(entry);
  const refused = await holdFor(scene, model, system, task);
  if (refused) {
    entry.status = 'failed';
    entry.steps = entry.failedSteps = 1;
    entry.durationMs = Date.now() - started;
    transcript.push({ role: 'assistant', content: `Not run: ${refused}` });
    return { text: `The assistant could not take the task: ${refused}`, failed: true };
  }
  const tools = await toolsForTurn(scene.tools, {
    actor: scene.actor,
    twin: scene.twin,
    assistant,
    historyId: scene.historyId,
    conversationId: scene.conversationId,
    modelKind: model.resolved.kind,
    origin: 'subagent',
    approvalTimeoutMs: SUBAGENT_APPROVAL_TIMEOUT_MS,
    signal,
    numberApproval: scene.numberApproval,
  });
  const toolSet = await toToolSet(tools.specs, (key, status) => {
    if (status !== 'completed' && status !== 'failed' && status !== 'declined') return;
    entry.steps += 1;
    if (status !== 'completed') entry.failedSteps += 1;
    transcript.push({ role: 'tool', content: `${key}: ${status}` });
  });
  const messages: ModelMessage[] = [{ role: 'user', content: task }];
  const result = await streamAnswer({
    model: model.resolved,
    system: system || undefined,
    messages,
    tools: tools.specs.length > 0 ? toolSet : undefined,
    toolChoice: tools.toolChoice,
    maxSteps: SUBAGENT_MAX_STEPS,
    maxOutputTokens: isPriced(model.price) ? model.outputLimit : undefined,
    signal,
  });
  tally.calls.push(...tools.calls);
  return tallyAnswer(tally, entry, model, result, started);
}

/**
 * Holds the subagent's most expensive cost on the turn's record before it runs (every step may send the
 * task again with what came before, and answer up to the output limit); the reason when the balance cannot.
 */
async function holdFor(scene: SubagentScene, model: SubagentModel, system: string, task: string): Promise<string | undefined> {
  if (!isPriced(model.price)) return undefined;
  const inputBound = (promptTokenBound([system, task]) + model.outputLimit) * SUBAGENT_MAX_STEPS;
  try {
    await scene.reserve(holdOf(inputBound, model.outputLimit * SUBAGENT_MAX_STEPS, model.price));
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** What the subagent's answer adds to its entry and to the turn's tally; the text its caller reads. */
function tallyAnswer(tally: SubagentTally, entry: SubagentEntry, model: SubagentModel, result: Awaited<ReturnType<typeof streamAnswer>>, started: number) {
  entry.steps += 1;
  if (result.failed) entry.failedSteps += 1;
  entry.status = result.failed ? 'failed' : result.cancelled ? 'cancelled' : 'complete';
  const cost = result.failed ? 0 : costOf(result.usage, model.price);
  tally.usage.inputTokens += result.usage.inputTokens;
  tally.usage.outputTokens += result.usage.outputTokens;
  tally.cost += cost;
  entry.tokens = result.usage.inputTokens + result.usage.outputTokens;
  entry.credits = cost;
  entry.durationMs = Date.now() - started;
  entry.transcript.push({ role: 'assistant', content: result.failed ? result.failed.message : result.text });
  if (result.failed) return { text: `The assistant failed: ${result.failed.message}`, failed: true };
  return { text: result.text, failed: false };
}
