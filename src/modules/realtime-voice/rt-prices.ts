// What real-time voice costs: the provider's `response.done` usage at RT_PRICE_* (credits per 1,000
// tokens, 0 unless set), and what a session holds for a minute of talk before it happens.
import { costOf } from '../conversations/turn-billing.js';

export interface RtPrices {
  audioInPer1k: number;
  audioOutPer1k: number;
  textInPer1k: number;
  textOutPer1k: number;
}

/** Token counts of one or more `response.done` usages. */
export interface RtUsage {
  audioIn: number;
  textIn: number;
  audioOut: number;
  textOut: number;
}

export const NO_USAGE: RtUsage = { audioIn: 0, textIn: 0, audioOut: 0, textOut: 0 };

/**
 * Audio tokens of a minute of talk, both ways, as OpenAI-style real-time models count them (about 10
 * input tokens a second of the person, 20 output tokens a second of the answer): what a hold assumes.
 */
export const AUDIO_IN_TOKENS_PER_MINUTE = 600;
export const AUDIO_OUT_TOKENS_PER_MINUTE = 1200;
/** A session's record holds this many minutes of talk when it opens; each further minute is held as it starts. */
export const HOLD_MINUTES = 2;

export const isPricedRt = (prices: RtPrices): boolean => prices.audioInPer1k > 0 || prices.audioOutPer1k > 0 || prices.textInPer1k > 0 || prices.textOutPer1k > 0;

/** The usage of a `response.done` event (GA shape: input_token_details / output_token_details). */
export function usageOfResponse(response: unknown): RtUsage {
  const usage = (response as { usage?: Record<string, unknown> } | undefined)?.usage;
  if (!usage) return NO_USAGE;
  const input = (usage.input_token_details ?? {}) as Record<string, unknown>;
  const output = (usage.output_token_details ?? {}) as Record<string, unknown>;
  const n = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
  const audioIn = n(input.audio_tokens);
  const audioOut = n(output.audio_tokens);
  // Text is what the totals hold beyond audio when the details leave text out.
  const textIn = input.text_tokens !== undefined ? n(input.text_tokens) : Math.max(0, n(usage.input_tokens) - audioIn);
  const textOut = output.text_tokens !== undefined ? n(output.text_tokens) : Math.max(0, n(usage.output_tokens) - audioOut);
  return { audioIn, textIn, audioOut, textOut };
}

export const addUsage = (a: RtUsage, b: RtUsage): RtUsage => ({ audioIn: a.audioIn + b.audioIn, textIn: a.textIn + b.textIn, audioOut: a.audioOut + b.audioOut, textOut: a.textOut + b.textOut });

/** Credits for the usage, rounded up to the ledger's 6 decimals like a chat turn's. */
export function costOfRt(usage: RtUsage, prices: RtPrices): number {
  // Four prices: costOf (one price each way) is applied to the sum of the in and out parts at unit price.
  const input = usage.audioIn * prices.audioInPer1k + usage.textIn * prices.textInPer1k;
  const output = usage.audioOut * prices.audioOutPer1k + usage.textOut * prices.textOutPer1k;
  return costOf({ inputTokens: input, outputTokens: output }, { inputPer1k: 1, outputPer1k: 1 });
}

/** What `minutes` of talk would cost at most (the audio of both ways). */
export function holdForMinutes(minutes: number, prices: RtPrices): number {
  return costOfRt({ audioIn: AUDIO_IN_TOKENS_PER_MINUTE * minutes, audioOut: AUDIO_OUT_TOKENS_PER_MINUTE * minutes, textIn: 0, textOut: 0 }, prices);
}

/** Token totals as a history record keeps them. */
export const recordUsageOf = (usage: RtUsage) => ({ inputTokens: usage.audioIn + usage.textIn, outputTokens: usage.audioOut + usage.textOut });
