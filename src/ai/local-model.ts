// The built-in local model: an AI SDK v3 language model used when no OpenAI-compatible endpoint
// is configured, so a person can chat without an API key. It answers extractively from the
// passages and memories the engine puts in the system text (their format: prompt.ts).
import { randomUUID } from 'node:crypto';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { estimateTokens, parseContextSections } from './prompt.js';

const WORDS_PER_PIECE = 4;
const MAX_SENTENCES = 3;
const MAX_SENTENCE_CHARS = 400;

const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being ' +
    'below between both but by can could did do does doing down during each few for from further ' +
    'had has have having he her here hers herself him himself his how i if in into is it its itself ' +
    'just me more most my myself no nor not now of off on once only or other our ours ourselves out ' +
    'over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself yourselves tell know please ' +
    'anything something thing things say said'
  ).split(' '),
);

export function createLocalModel(): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'local',
    modelId: 'built-in-local',
    supportedUrls: {},
    // Tools offered are ignored on purpose: the model never calls them, and a warning per
    // turn would only add noise to the SDK's console output.
    async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
      throwIfAborted(options.abortSignal);
      const { text, usage } = answer(options.prompt);
      return {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
        response: { id: randomUUID(), timestamp: new Date(), modelId: 'built-in-local' },
      };
    },
    async doStream(options: LanguageModelV3CallOptions) {
      throwIfAborted(options.abortSignal);
      const { text, usage } = answer(options.prompt);
      const parts: LanguageModelV3StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: randomUUID(), timestamp: new Date(), modelId: 'built-in-local' },
        { type: 'text-start', id: 'txt-0' },
        ...splitIntoPieces(text).map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 'txt-0', delta })),
        { type: 'text-end', id: 'txt-0' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
      ];
      return { stream: pacedStream(parts, options.abortSignal) };
    },
  };
}

function answer(prompt: LanguageModelV3Prompt): { text: string; usage: LanguageModelV3Usage } {
  const system = prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n');
  const { passages, memories } = parseContextSections(system);
  const sentences = pickSentences(lastUserText(prompt), [...passages, ...memories]);
  const text =
    sentences.length > 0
      ? `I am the built-in local model, so I can only answer from your files and memories. From what I was given: ${sentences.join(' ')}`
      : 'I am the built-in local model: no model provider is configured, so I can only answer from your files ' +
        'and memories, and I found nothing in the material I was given about your question.';
  const input = estimateTokens(promptText(prompt));
  const output = estimateTokens(text);
  return {
    text,
    usage: {
      inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: output, text: output, reasoning: undefined },
    },
  };
}

/** Best-overlapping sentences first; ties keep the order they were given in (rank order). */
function pickSentences(question: string, sources: string[]): string[] {
  const wanted = new Set(terms(question));
  if (wanted.size === 0) return [];
  const seen = new Set<string>();
  const scored: Array<{ sentence: string; score: number; order: number }> = [];
  for (const sentence of sources.flatMap(splitSentences)) {
    if (seen.has(sentence)) continue;
    seen.add(sentence);
    const score = new Set(terms(sentence).filter((t) => wanted.has(t))).size;
    if (score > 0) scored.push({ sentence, score, order: scored.length });
  }
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  return scored.slice(0, MAX_SENTENCES).map((s) => s.sentence);
}

function terms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => w.length > 1 && !STOP_WORDS.has(w)).map(stem);
}

/** A plural and its singular should match ("files" asks about "file"). */
function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => (s.length > MAX_SENTENCE_CHARS ? `${s.slice(0, MAX_SENTENCE_CHARS).trimEnd()}…` : s));
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message.role === 'user') {
      return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
    }
  }
  return '';
}

/** All text the model was given, for the input-token estimate. */
function promptText(prompt: LanguageModelV3Prompt): string {
  return prompt
    .map((message) => {
      if (message.role === 'system') return message.content;
      return message.content
        .map((part) => {
          if (part.type === 'text' || part.type === 'reasoning') return part.text;
          if (part.type === 'tool-call') return JSON.stringify(part.input ?? null);
          if (part.type === 'tool-result') return JSON.stringify(part.output);
          return '';
        })
        .join('\n');
    })
    .join('\n');
}

/** Groups of a few words; whitespace stays attached so the pieces join back to the exact text. */
function splitIntoPieces(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [];
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_PIECE) {
    pieces.push(words.slice(i, i + WORDS_PER_PIECE).join(''));
  }
  return pieces;
}

/**
 * Hands out one part per pull, yielding to the event loop in between so a long answer never
 * blocks other requests. On abort the stream errors with an AbortError, as a fetch-based provider
 * would: streamText recognises that and ends with an 'abort' part instead of an error.
 */
function pacedStream(parts: LanguageModelV3StreamPart[], signal?: AbortSignal): ReadableStream<LanguageModelV3StreamPart> {
  let next = 0;
  let settled = false;
  let onAbort: (() => void) | undefined;
  return new ReadableStream<LanguageModelV3StreamPart>({
    start(controller) {
      onAbort = () => {
        if (settled) return;
        settled = true;
        controller.error(abortError(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    },
    async pull(controller) {
      if (next > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (settled) return;
      controller.enqueue(parts[next++]);
      if (next === parts.length) {
        settled = true;
        if (onAbort) signal?.removeEventListener('abort', onAbort);
        controller.close();
      }
    },
    cancel() {
      settled = true;
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    },
  });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('The operation was aborted.', 'AbortError');
}
