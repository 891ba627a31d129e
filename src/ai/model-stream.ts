// A model call as the few parts a turn cares about, and how a provider's failure reads. A turn that offers no tools and speaks in
// plain text reads the provider's stream directly: from an OpenAI-compatible endpoint through the lean
// client (src/ai/chat-stream.ts), from the built-in model through LanguageModelV3.doStream. streamText's
// multi-step machinery cost more CPU per answer than the rest of the turn (measured 2.5 ms against
// 0.9 ms for a 20-piece answer). Turns with tools go through streamText, which runs the tool loop; the
// tools report their own statuses (src/ai/tools/turn-tools.ts), since a call may wait for an approval.
import { setTimeout as delay } from 'node:timers/promises';
import type { ModelMessage, TextStreamPart, ToolSet } from 'ai';
import { APICallError, type LanguageModelV3CallOptions, type LanguageModelV3Prompt } from '@ai-sdk/provider';
import { openChatStream, type ChatEndpoint, type ChatStreamRequest } from './chat-stream.js';
import { reasoningEffortOnWire, type ClampedReasoningEffort, type ResolvedModel } from './registry.js';
import { loadAiSdk, loadedAiSdk } from './sdk.js';

/** Prefix of every provider failure message. */
export const PROVIDER_FAILED_PREFIX = 'The model provider failed';

/** A tool call's progress, as the `tool` frame and TOOL_STATUS carry it. */
export type ToolStatus = 'started' | 'completed' | 'failed' | 'awaiting_approval' | 'declined';

/** One model call of a turn (with tools: a tool loop of up to maxSteps calls). */
export interface ModelStreamInput {
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
  /** 'required': the model must call a tool in its first step (an assistant's assistantToolMode). */
  toolChoice?: 'auto' | 'required';
  /** Retries of the initial call on 408/409/429/5xx (never mid-stream). Default 1. */
  maxRetries?: number;
  /** Aborting it cancels the turn gracefully (cancel_request, closed SSE request). */
  signal?: AbortSignal;
}

export type TurnPart =
  | { type: 'text'; text: string }
  | { type: 'step-start' }
  | { type: 'step-finish'; usage: { inputTokens: number | undefined; outputTokens: number | undefined } }
  | { type: 'finish'; finishReason: string }
  | { type: 'abort' }
  | { type: 'error'; error: unknown };

/** The same first wait as the AI SDK's retries (then doubling), unless the provider says otherwise. */
const RETRY_DELAY_MS = 2_000;
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Runs the model and hands each part to `onPart` as it arrives; resolves when the model is done,
 * rejects when the call fails before answering (after its retries) or reading fails. The endpoint path
 * pushes parts straight from the socket's data event (chat-stream.ts); the others read their stream.
 */
export function streamModelParts(input: ModelStreamInput, onPart: (part: TurnPart) => void): Promise<void> {
  const messages = input.tools && Object.keys(input.tools).length > 0 ? undefined : plainMessages(input.system, input.messages);
  if (!messages) return sdkParts(input, onPart);
  return input.model.chat ? endpointParts(input, input.model.chat, messages, onPart) : directParts(input, toProviderPrompt(messages), onPart);
}

async function endpointParts(input: ModelStreamInput, endpoint: ChatEndpoint, messages: PlainMessage[], onPart: (part: TurnPart) => void): Promise<void> {
  const request: ChatStreamRequest = {
    messages,
    maxTokens: input.maxOutputTokens,
    reasoningEffort: reasoningEffortOnWire(input.reasoningEffort),
    signal: input.signal,
  };
  const stream = await withRetries(() => openChatStream(endpoint, request), input.maxRetries ?? 1, input.signal);
  onPart({ type: 'step-start' });
  await stream.read((part) => {
    if (part.type === 'finish') {
      onPart({ type: 'step-finish', usage: part.usage });
      onPart({ type: 'finish', finishReason: part.finishReason });
    } else onPart(part);
  });
}

async function directParts(input: ModelStreamInput, prompt: LanguageModelV3Prompt, onPart: (part: TurnPart) => void): Promise<void> {
  const options: LanguageModelV3CallOptions = {
    prompt,
    maxOutputTokens: input.maxOutputTokens,
    providerOptions: input.model.providerOptions(input.reasoningEffort),
    abortSignal: input.signal,
  };
  const { stream } = await withRetries(() => input.model.model.doStream(options), input.maxRetries ?? 1, input.signal);
  onPart({ type: 'step-start' });
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value: part, done } = await reader.read();
      if (done) return;
      switch (part.type) {
        case 'text-delta':
          onPart({ type: 'text', text: part.delta });
          break;
        case 'finish':
          onPart({ type: 'step-finish', usage: { inputTokens: part.usage.inputTokens.total, outputTokens: part.usage.outputTokens.total } });
          onPart({ type: 'finish', finishReason: part.finishReason.unified });
          break;
        case 'error':
          onPart({ type: 'error', error: part.error });
          break;
        default:
          break;
      }
    }
  } finally {
    // Leaving early (the consumer threw): let the provider's stream go.
    await reader.cancel().catch(() => {});
  }
}

/** The initial call, retried on what the provider marks retryable (408/409/429/5xx); never mid-stream. */
async function withRetries<T>(call: () => PromiseLike<T>, maxRetries: number, signal: AbortSignal | undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= maxRetries || signal?.aborted || !APICallError.isInstance(error) || !error.isRetryable) throw error;
      await delay(retryDelay(error, RETRY_DELAY_MS * 2 ** attempt), undefined, { signal });
    }
  }
}

function retryDelay(error: APICallError, backoff: number): number {
  const headers = error.responseHeaders ?? {};
  const ms = headers['retry-after-ms'] ? Number.parseFloat(headers['retry-after-ms']) : headers['retry-after'] ? retryAfterMs(headers['retry-after']) : NaN;
  return Number.isFinite(ms) && ms >= 0 && (ms < MAX_RETRY_AFTER_MS || ms < backoff) ? ms : backoff;
}

const retryAfterMs = (value: string): number => {
  const seconds = Number.parseFloat(value);
  return Number.isNaN(seconds) ? Date.parse(value) - Date.now() : seconds * 1_000;
};

type PlainMessage = ChatStreamRequest['messages'][number];

/** The turn's messages as plain text, system first; undefined when a message carries anything else. */
function plainMessages(system: string | undefined, messages: ModelMessage[]): PlainMessage[] | undefined {
  const plain: PlainMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    if (message.role !== 'system' && message.role !== 'user' && message.role !== 'assistant') return undefined;
    const text = message.role === 'system' ? message.content : plainText(message.content);
    if (text === undefined) return undefined;
    plain.push({ role: message.role, content: text });
  }
  return plain;
}

function toProviderPrompt(messages: PlainMessage[]): LanguageModelV3Prompt {
  return messages.map((message) =>
    message.role === 'system' ? { role: 'system', content: message.content } : { role: message.role, content: [{ type: 'text', text: message.content }] },
  );
}

/** The provider prompt of plain-text messages; undefined when a message carries anything else. */
export function plainPrompt(system: string | undefined, messages: ModelMessage[]): LanguageModelV3Prompt | undefined {
  const plain = plainMessages(system, messages);
  return plain && toProviderPrompt(plain);
}

function plainText(content: ModelMessage['content']): string | undefined {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) {
    if (part.type !== 'text') return undefined;
    text += part.text;
  }
  return text;
}

async function sdkParts(input: ModelStreamInput, onPart: (part: TurnPart) => void): Promise<void> {
  const { streamText, stepCountIs } = await loadAiSdk();
  const stream = streamText({
    model: input.model.model,
    system: input.system,
    messages: input.messages,
    tools: input.tools,
    stopWhen: stepCountIs(input.maxSteps ?? 5),
    // Required only for the first step: after its tool calls the model must be free to answer.
    prepareStep: input.toolChoice === 'required' ? ({ stepNumber }) => (stepNumber === 0 ? { toolChoice: 'required' } : undefined) : undefined,
    maxOutputTokens: input.maxOutputTokens,
    maxRetries: input.maxRetries ?? 1,
    abortSignal: input.signal,
    providerOptions: input.model.providerOptions(input.reasoningEffort),
    // Failures arrive as 'error' parts below; the SDK's default would also print them.
    onError: () => {},
  });
  for await (const part of stream.fullStream) {
    const mapped = fromSdkPart(part);
    if (mapped) onPart(mapped);
  }
}

function fromSdkPart(part: TextStreamPart<ToolSet>): TurnPart | undefined {
  switch (part.type) {
    case 'text-delta':
      return { type: 'text', text: part.text };
    case 'start-step':
      return { type: 'step-start' };
    case 'finish-step':
      return { type: 'step-finish', usage: part.usage };
    case 'finish':
      return { type: 'finish', finishReason: part.finishReason };
    case 'abort':
      return { type: 'abort' };
    case 'error':
      return { type: 'error', error: part.error };
    default:
      return undefined;
  }
}

/** "The model provider failed: <reason>", with the HTTP status when the provider answered one. */
export function describeFailure(error: unknown): string {
  // Only the SDK's calls retry into a RetryError, so one can exist only once the SDK is loaded.
  const RetryError = loadedAiSdk()?.RetryError;
  const cause = RetryError?.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode ? ` (HTTP ${cause.statusCode})` : '';
    return `${PROVIDER_FAILED_PREFIX}: ${cause.message}${status}`;
  }
  const reason = cause instanceof Error ? cause.message : String(cause);
  return `${PROVIDER_FAILED_PREFIX}: ${reason || 'unknown error'}`;
}
