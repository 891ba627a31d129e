// The streaming core of a conversation turn, independent of the transport: runs the model (directly,
// or through streamText when the turn offers tools: model-parts.ts), hands each text piece to the
// caller, and always comes back with what was produced: complete, cancelled (partial text, usage
// estimated if needed), failed (clear message) or empty (behaviour 11's notice). It never throws for
// a provider failure or a cancel.
import { APICallError, RetryError, type ModelMessage, type ToolSet } from 'ai';
import { estimateTokens } from '../../ai/local-model.js';
import type { ClampedReasoningEffort, ResolvedModel } from '../../ai/registry.js';
import { streamModelParts, type TurnPart } from './model-parts.js';

/** Behaviour 11: what the person sees instead of an empty reply. */
export const EMPTY_ANSWER_NOTICE = 'The model returned an empty answer. Please try again.';
/** Prefix of every provider failure message. */
export const PROVIDER_FAILED_PREFIX = 'The model provider failed';

export type ToolStatus = 'started' | 'completed' | 'failed';

export interface StreamAnswerInput {
  /** From the model registry (`resolveModel`). */
  model: ResolvedModel;
  system?: string;
  /** Conversation history then the new question, oldest first. */
  messages: ModelMessage[];
  /** Already clamped with clampReasoningEffort; passed the way this model's provider reads it. */
  reasoningEffort?: ClampedReasoningEffort;
  maxOutputTokens?: number;
  /** Tools offered to the model; with tools the turn may take up to maxSteps model calls. */
  tools?: ToolSet;
  maxSteps?: number;
  /** Retries of the initial call on 408/409/429/5xx (never mid-stream). Default 1. */
  maxRetries?: number;
  /** Aborting it cancels the turn gracefully (cancel_request, closed SSE request). */
  signal?: AbortSignal;
  /** Every text piece, with the whole answer so far. Must not throw. Never called after a cancel. */
  onDelta?: (delta: string, textSoFar: string) => void;
  /** A tool the model called: 'started', then 'completed' or 'failed'. Must not throw. */
  onTool?: (name: string, status: ToolStatus) => void;
}

export interface AnswerUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface StreamAnswerResult {
  /** The answer (partial when cancelled or failed; the notice when the model gave no text). */
  text: string;
  usage: AnswerUsage;
  /** True when some of the usage is our estimate (cancelled or failed step, or a provider without usage). */
  usageEstimated: boolean;
  /** The SDK's finish reason, or 'abort' / 'error'. */
  finishReason: string;
  cancelled: boolean;
  failed?: { message: string };
  /** Behaviour 11: the model ended without text and `text` is EMPTY_ANSWER_NOTICE. */
  emptyReply: boolean;
  modelId: string;
}

export async function streamAnswer(input: StreamAnswerInput): Promise<StreamAnswerResult> {
  const { model, signal } = input;
  const promptTokens = estimateTokens(promptText(input.system, input.messages));
  let text = '';
  let stepText = '';
  let stepOpen = false;
  let finishReason: string | undefined;
  let cancelled = false;
  let failure: string | undefined;
  let estimated = false;
  const usage: AnswerUsage = { inputTokens: 0, outputTokens: 0 };

  const addStepUsage = (step: { inputTokens: number | undefined; outputTokens: number | undefined }): void => {
    if (step.inputTokens === undefined || step.outputTokens === undefined) estimated = true;
    usage.inputTokens += step.inputTokens ?? promptTokens;
    usage.outputTokens += step.outputTokens ?? estimateTokens(stepText);
  };

  if (signal?.aborted) return result({ text, usage, usageEstimated: false, finishReason: 'abort', cancelled: true });

  const onPart = (part: TurnPart): void => {
    switch (part.type) {
      case 'text':
        if (signal?.aborted || part.text === '') break;
        text += part.text;
        stepText += part.text;
        input.onDelta?.(part.text, text);
        break;
      case 'tool':
        input.onTool?.(part.name, part.status);
        break;
      case 'step-start':
        stepOpen = true;
        break;
      case 'step-finish':
        addStepUsage(part.usage);
        stepText = '';
        stepOpen = false;
        break;
      case 'finish':
        finishReason = part.finishReason;
        break;
      case 'abort':
        cancelled = true;
        break;
      case 'error':
        if (signal?.aborted) cancelled = true;
        else failure ??= describeFailure(part.error);
        break;
    }
  };
  try {
    await streamModelParts(input, onPart);
  } catch (error) {
    if (signal?.aborted) cancelled = true;
    else failure ??= describeFailure(error);
  }

  // A step the provider started answering but never finished (cancel, failure mid-stream): the
  // provider sends no usage for it, so estimate it: the prompt's characters / 4 for the input, and
  // the text produced in that step / 4 for the output (the same rule as the local model).
  if (stepOpen) {
    estimated = true;
    usage.inputTokens += promptTokens;
    usage.outputTokens += estimateTokens(stepText);
  }

  if (cancelled) return result({ text, usage, usageEstimated: estimated, finishReason: 'abort', cancelled: true });
  if (failure !== undefined) {
    return result({ text, usage, usageEstimated: estimated, finishReason: 'error', cancelled: false, failed: { message: failure } });
  }
  if (text.trim() === '') {
    input.onDelta?.(EMPTY_ANSWER_NOTICE, EMPTY_ANSWER_NOTICE);
    return result({ text: EMPTY_ANSWER_NOTICE, usage, usageEstimated: estimated, finishReason: finishReason ?? 'stop', cancelled: false, emptyReply: true });
  }
  return result({ text, usage, usageEstimated: estimated, finishReason: finishReason ?? 'stop', cancelled: false });

  function result(fields: Omit<StreamAnswerResult, 'modelId' | 'emptyReply'> & { emptyReply?: boolean }): StreamAnswerResult {
    return { ...fields, emptyReply: fields.emptyReply ?? false, modelId: model.modelId };
  }
}

/** "The model provider failed: <reason>", with the HTTP status when the provider answered one. */
export function describeFailure(error: unknown): string {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode ? ` (HTTP ${cause.statusCode})` : '';
    return `${PROVIDER_FAILED_PREFIX}: ${cause.message}${status}`;
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return `${PROVIDER_FAILED_PREFIX}: ${reason || 'unknown error'}`;
}

/** All text the model is given, for the input estimate of an unfinished step. */
function promptText(system: string | undefined, messages: ModelMessage[]): string {
  const parts: string[] = system ? [system] : [];
  for (const message of messages) {
    if (typeof message.content === 'string') parts.push(message.content);
    else parts.push(JSON.stringify(message.content));
  }
  return parts.join('\n');
}
