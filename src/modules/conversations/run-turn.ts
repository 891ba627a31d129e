// runTurn: one conversation turn, shared by the Socket.IO and SSE routes (and later voice and embedded
// visitors). Checks, context, model call, history record at start and end, and the charge for real
// usage in the same transaction as the record's end. Transports only bind a TurnSink.
import type { ModelMessage } from 'ai';
import { clampReasoningEffort, OPENAI_DEFAULT_BASE_URL, type ClampedReasoningEffort, type DeploymentModelConfig, type ReasoningEffort, type ModelRegistry, type ResolvedModel } from '../../ai/registry.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import { AppError, BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import { resolveAssistant, type ResolvedAssistant } from '../assistants/resolver.js';
import { findModelForTurn, type ModelForTurn } from '../custom-models/model-lookup.js';
import { finishRecord, recentExchanges } from '../history/history.records.js';
import { startRecord } from './turn-record.repo.js';
import type { TurnJournal } from './turn-journal.js';
import type { MemoryEntry, RetrievalEntry } from '../history/history.tables.js';
import { assertTwinUsable } from '../twins/twins.service.js';
import { streamAnswer } from './stream-turn.js';
import { promptTokenBound } from '../../ai/prompt.js';
import { CONTEXT_ALLOWANCE_TOKENS, costOf, extendHold, FREE, holdOf, isPriced, settleTurn, type Price } from './turn-billing.js';
import { buildSystemText, emptyContextProviders, type TurnContextProviders } from './turn-context.js';
import { admitTurn } from './turn-limits.js';
import { delegateRunner, newTally, type SubagentModel } from './subagents.js';
import { toolsForTurn, type TurnToolDeps } from './turn-tools.js';
import { toToolSet } from '../../ai/tools/turn-tools.js';
import { directTurnReads, type TurnReads } from './turn-reads.js';
import type { TurnCaller, TurnInput, TurnResult, TurnSink } from './turn-types.js';
import type { Outbound } from '../../platform/net/outbound.js';

export interface TurnDeps {
  db: Database;
  secrets: Pick<SecretBox, 'decrypt'>;
  models: ModelRegistry;
  /** The deployment's endpoint (a custom model with a key but no base URL uses its base URL). */
  deploymentModel: DeploymentModelConfig;
  /** The outbound guard a custom model's own baseUrl is reached through (the deployment's endpoints are trusted). */
  outbound: Outbound;
  /** Its price in credits per 1,000 tokens (DEFAULT_PRICE_IN/OUT); free when absent. */
  deploymentPrice?: Price;
  providers?: TurnContextProviders;
  log?: { warn(details: object, message: string): void };
  /** Told of the balance row a turn's charge changed (by settleTurn), before the transport says the turn is complete. */
  changes?: Pick<ChangeFeed, 'committed'>;
  /** The twin and New Conversation (cached by the app: turn-reads.ts); from `db` when absent. */
  reads?: TurnReads;
  /** A connected twin's chat subscription (modules/subscription), read per turn; null: the deployment's endpoint. */
  subscriptionModel?: (twinId: string) => Promise<{ baseUrl: string; apiKey: string; model: string } | null>;
  /** Connectors, the approval gate and the built-in tools' runners (turn-tools.ts); no tools when absent. */
  tools?: TurnToolDeps;
  /** APPROVAL_TIMEOUT_MS: how long a chat turn waits for a decision (default 3 minutes). */
  approvalTimeoutMs?: number;
  /** Bounds what a crash mid-answer loses (turn-journal.ts): the opening flushed soon, the answer so far saved. */
  journal?: TurnJournal;
}

export const DEFAULT_APPROVAL_TIMEOUT_MS = 180_000;

/** The name of the retrieval step in `tool` frames. */
export const RETRIEVAL_TOOL = 'retrieval';

export const TURN_MESSAGES = {
  visitorsNotYet: 'Conversations of embedded visitors are not available yet',
  noTwin: 'Choose a Digital Twin before starting a conversation',
  noQuestion: 'A question is required',
  twinNotFound: 'Institution not found',
} as const;

interface ModelChoice {
  resolved: ResolvedModel;
  price: Price;
  custom: ModelForTurn | null;
}

export async function runTurn(deps: TurnDeps, caller: TurnCaller, input: TurnInput, sink: TurnSink): Promise<TurnResult> {
  if (caller.kind === 'visitor') throw new AppError(501, TURN_MESSAGES.visitorsNotYet, 'NOT_IMPLEMENTED');
  const { db } = deps;
  const reads = deps.reads ?? directTurnReads(db);
  const { actor } = caller;
  const question = (input.inputs.at(-1) ?? '').trim();
  if (!question) throw new BadRequestError(TURN_MESSAGES.noQuestion, 'QUESTION_REQUIRED');
  if (!actor.twinId) throw new BadRequestError(TURN_MESSAGES.noTwin, 'NO_CURRENT_TWIN');
  // What the turn needs first: the twin and the assistant (behaviour 1), from the caches as a rule.
  const [twin, assistant] = await Promise.all([reads.twin(actor.twinId), resolveAssistant(db, actor, input.assistantId, reads.standardAssistant)]);
  if (!twin) throw new NotFoundError(TURN_MESSAGES.twinNotFound);
  assertTwinUsable(twin);
  const choice = await chooseModel(deps, twin.id, assistant);
  const providers = deps.providers ?? emptyContextProviders;
  const useContext = !assistant.bypassSystemContext;
  // Then one stage: the record's opening (which checks the paying balance itself), and beside it the
  // context reads, each reading the person's setting it depends on in its own statement: the memories
  // (the Enable User Memory switch) and the earlier exchanges of the conversation asked for (the
  // assistant's remember_history, else the person's count). So the person's row is never read first.
  // A refused turn discards them; exchanges count only if the turn really continues that conversation
  // (its owner's, in this twin), and only finished exchanges are read, so the new record is never among them.
  const memoriesRead = useContext ? providers.recall(caller, question).then((recalled) => recalled.memories) : Promise.resolve<MemoryEntry[]>([]);
  const exchangesRead = input.conversationId ? recentExchanges(db, input.conversationId, actor.userId, assistant.rememberHistory ?? 'as-set') : Promise.resolve([]);
  // Retrieval (the assistant's ragEnabled, or ragOnly) runs only when the person has a file to search:
  // asked beside the opening, so a person without files pays no search and sees no retrieval frames.
  // A failed answer counts as searchable (the search itself then fails or finds, with its frames).
  const searchable =
    useContext && (assistant.ragEnabled || input.ragOnly) ? (providers.searchable?.(caller) ?? Promise.resolve(true)).catch(() => true) : Promise.resolve(false);
  for (const read of [memoriesRead, exchangesRead]) read.catch(() => {}); // awaited below, unless the turn is refused
  // A priced turn holds its most expensive cost from the balance that pays: its prompt (the question and
  // an allowance for the context, read beside the opening) and its whole output limit, at its price.
  const priced = isPriced(choice.price);
  const outputLimit = choice.custom?.maxTokens ?? twin.maxCompletionTokens;
  const openingInputBound = promptTokenBound([question]) + CONTEXT_ALLOWANCE_TOKENS;
  const holdAmount = priced ? holdOf(openingInputBound, outputLimit, choice.price) : 0;
  // Caps, the hold and the record's start in one admission step, so racing turns cannot pass a cap or
  // the balance together.
  let record = await admitTurn(db, twin, actor.userId, holdAmount, (executor, hold) =>
    startRecord(executor, {
      twinId: twin.id,
      userId: actor.userId,
      conversationId: input.conversationId,
      assistantId: assistant.assistant.id,
      assistantName: assistant.assistant.name,
      question,
      models: [choice.resolved.modelId],
      hold,
      processId: deps.journal?.processId,
    }),
  );
  deps.journal?.opened(record.id);
  try {
    sink.onStart?.({ historyId: record.id, conversationId: record.conversationId });
    const continued = record.conversationId === input.conversationId;
    // Retrieval shows as a tool of the turn, so it starts once the turn has (after onStart).
    const [memories, passages, exchanges] = await Promise.all([
      memoriesRead,
      searchable.then((worth) => (worth ? retrieveWithFrames(deps, caller, question, input, sink) : ([] as RetrievalEntry[]))),
      continued ? exchangesRead : [],
    ]);
    const system = buildSystemText({
      instructions: assistant.instructions,
      guardrails: { enabled: twin.guardrailsEnabled, text: twin.guardrailsText },
      memories,
      passages,
      ragOnly: input.ragOnly,
    });
    const effort = reasoningFor(twin.reasoningEffort, choice.custom);
    const messages: ModelMessage[] = [];
    for (const exchange of exchanges) {
      messages.push({ role: 'user', content: exchange.question }, { role: 'assistant', content: exchange.answer });
    }
    messages.push({ role: 'user', content: question });
    if (priced) {
      // The context is known now: a prompt larger than the opening allowed for holds the rest first.
      const inputBound = promptTokenBound([system, ...messages.map((message) => String(message.content))]);
      if (inputBound > openingInputBound) {
        const extended = await extendHold(db, record, holdOf(inputBound - openingInputBound, 0, choice.price));
        record = { ...record, ...extended };
      }
    }

    // The turn's tools: connectors (with their approvals), delegated subagents, opted-in built-ins.
    const tally = newTally();
    let reserving: Promise<void> = Promise.resolve();
    /** Holds more for a subagent, one extension at a time (each starts from the record's latest version). */
    const reserve = (extra: number): Promise<void> => {
      const next = reserving.then(async () => {
        const extended = await extendHold(db, record, extra);
        record = { ...record, ...extended };
      });
      reserving = next.catch(() => {});
      return next;
    };
    const guardrails = twin.guardrailsEnabled ? twin.guardrailsText : '';
    const delegate =
      assistant.delegates.length > 0 && deps.tools
        ? await delegateRunner(
            {
              db,
              tools: deps.tools,
              actor,
              twin: { id: twin.id, toolsDisabled: twin.toolsDisabled, guardrails },
              parentId: assistant.assistant.id,
              delegates: assistant.delegates,
              historyId: record.id,
              conversationId: record.conversationId,
              modelFor: async (sub): Promise<SubagentModel> => {
                const subChoice = await chooseModel(deps, twin.id, sub);
                return { resolved: subChoice.resolved, price: subChoice.price, outputLimit: subChoice.custom?.maxTokens ?? twin.maxCompletionTokens };
              },
              reserve,
              signal: sink.signal,
            },
            tally,
          )
        : undefined;
    const turnTools = deps.tools
      ? await toolsForTurn(deps.tools, {
          actor,
          twin,
          assistant,
          historyId: record.id,
          conversationId: record.conversationId,
          modelKind: choice.resolved.kind,
          origin: 'chat',
          approvalTimeoutMs: deps.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
          signal: sink.signal,
          delegate,
        })
      : undefined;

    const result = await streamAnswer({
      model: choice.resolved,
      system: system || undefined,
      messages,
      reasoningEffort: effort,
      // A priced turn never answers past what it holds for.
      maxOutputTokens: priced ? outputLimit : choice.custom?.maxTokens,
      signal: sink.signal,
      onDelta: (delta, soFar) => {
        deps.journal?.progress(record.id, soFar);
        sink.onDelta(delta, soFar);
      },
      ...(turnTools && turnTools.specs.length > 0
        ? { tools: toToolSet(turnTools.specs, (name, status) => sink.onTool(name, status)), toolChoice: turnTools.toolChoice }
        : {}),
    });
    // What the subagents used is the turn's too: on its record and in its charge.
    const usage = { inputTokens: result.usage.inputTokens + tally.usage.inputTokens, outputTokens: result.usage.outputTokens + tally.usage.outputTokens };

    const status = result.failed ? 'failed' : result.cancelled ? 'cancelled' : 'complete';
    const { credits } = await settleTurn(db, {
      twin,
      userId: actor.userId,
      opened: record,
      changes: deps.changes,
      // A failed turn is not charged; a cancelled one pays for the partial answer.
      cost: result.failed ? 0 : costOf(result.usage, choice.price) + tally.cost,
      record: {
        answer: result.text,
        status,
        error: result.failed?.message ?? null,
        usage,
        models: [result.modelId, ...tally.entries.map((entry) => entry.model ?? '').filter((model) => model && model !== result.modelId)],
        memories,
        ragSearch: passages,
        ...(turnTools && turnTools.calls.length + tally.calls.length > 0 ? { toolCalls: [...turnTools.calls, ...tally.calls] } : {}),
        ...(tally.entries.length > 0 ? { subagents: tally.entries } : {}),
      },
    });
    if (status === 'complete' && !result.emptyReply && deps.providers?.afterTurn) {
      // Not awaited: the answer is complete. A provider logs its own failures.
      deps.providers.afterTurn(caller, { historyId: record.id, question, answer: result.text }, { longTermMemoryEnabled: twin.longTermMemoryEnabled }).catch(() => {});
    }
    return {
      answer: result.text,
      usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
      credits,
      historyId: record.id,
      conversationId: record.conversationId,
      cancelled: result.cancelled,
      emptyReply: result.emptyReply,
      ...(result.failed ? { failed: result.failed } : {}),
    };
  } catch (error) {
    // Never leave a record streaming: an unexpected failure ends it as failed, uncharged, its hold given back.
    await finishRecord(db, record.id, { answer: '', status: 'failed', error: error instanceof Error ? error.message : String(error) }).catch(() => {});
    throw error;
  } finally {
    deps.journal?.finished(record.id);
  }
}

/**
 * Retrieval is the turn's first tool: the transport shows it (SSE `tool` frames, started then completed
 * or failed). A failed search does not sink the turn; it answers without passages.
 */
async function retrieveWithFrames(
  deps: TurnDeps,
  caller: TurnCaller,
  question: string,
  input: TurnInput,
  sink: TurnSink,
): Promise<RetrievalEntry[]> {
  sink.onTool(RETRIEVAL_TOOL, 'started');
  try {
    const passages = await (deps.providers ?? emptyContextProviders).retrieve(caller, question, { ragOnly: input.ragOnly ?? false });
    sink.onTool(RETRIEVAL_TOOL, 'completed');
    return passages;
  } catch (error) {
    sink.onTool(RETRIEVAL_TOOL, 'failed');
    deps.log?.warn({ err: error }, 'retrieval failed; the turn answers without passages');
    return [];
  }
}

/** The assistant's model by name: a custom model available to the twin, else that id on the twin's subscription when connected, else on the deployment endpoint. */
async function chooseModel(deps: TurnDeps, twinId: string, assistant: ResolvedAssistant): Promise<ModelChoice> {
  const name = assistant.conversationModel;
  const custom = name ? await findModelForTurn(deps.db, deps.secrets, twinId, name) : null;
  if (custom) {
    const price = { inputPer1k: custom.inputPricePer1k, outputPer1k: custom.outputPricePer1k };
    const resolved =
      custom.baseUrl || custom.apiKey
        ? deps.models.resolveModel({
            kind: 'endpoint',
            baseUrl: custom.baseUrl || deps.deploymentModel.baseUrl || OPENAI_DEFAULT_BASE_URL,
            // The deployment's key goes to the deployment's endpoint only, never to a URL an administrator set.
            apiKey: custom.apiKey ?? (custom.baseUrl ? undefined : deps.deploymentModel.apiKey),
            model: custom.model,
            outbound: custom.baseUrl ? deps.outbound : null,
          })
        : deps.models.resolveModel({ kind: 'default', model: custom.model });
    return { resolved, price, custom };
  }
  // A twin connected to a chat subscription uses its API, paid by the subscription: no credits charged.
  const subscription = deps.subscriptionModel ? await deps.subscriptionModel(twinId) : null;
  if (subscription) {
    return { resolved: deps.models.resolveModel({ kind: 'endpoint', ...subscription, model: name || subscription.model, outbound: null }), price: FREE, custom: null };
  }
  const resolved = deps.models.resolveModel({ kind: 'default', ...(name ? { model: name } : {}) });
  return { resolved, price: resolved.kind === 'local' ? FREE : (deps.deploymentPrice ?? FREE), custom: null };
}

/**
 * Behaviour 12. The effort is sent only to a custom model that declares a minimum reasoning effort
 * (a reasoning model): the twin's effort, raised to that minimum, with 'off' respected. Other models
 * get no reasoning parameter (non-reasoning endpoints refuse it).
 */
function reasoningFor(twinEffort: ReasoningEffort, custom: ModelForTurn | null): ClampedReasoningEffort | undefined {
  if (!custom?.minReasoningEffort) return undefined;
  const minimum = custom.minReasoningEffort === 'off' ? undefined : custom.minReasoningEffort;
  return clampReasoningEffort(twinEffort, minimum);
}
