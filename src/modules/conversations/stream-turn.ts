// The streaming core of a conversation turn, independent of the transport: runs the model (directly,
// or through streamText when the turn offers tools: src/ai/model-stream.ts), hands each text piece to the
// caller, and always comes back with what was produced: complete, cancelled (partial text, usage
// estimated if needed), failed (clear message) or empty (behaviour 11's notice). It never throws for
// a provider failure or a cancel.
import { describeFailure, streamModelParts, type ModelStreamInput, type TurnPart } from '../../ai/model-stream.js';
import { estimateTokens, promptText } from '../../ai/prompt.js';

/** Behaviour 11: what the person sees instead of an empty reply. */
export const EMPTY_ANSWER_NOTICE = 'The model returned an empty answer. Please try again.';
/** What streamAnswer is given: the model call (src/ai/model-stream.ts) and the turn's callbacks. */
export type StreamAnswerInput = ModelStreamInput & {
  /** Every text piece, with the whole answer so far. Must not throw. Never called after a cancel. */
  onDelta?: (delta: string, textSoFar: string) => void;
};

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
  // Heard once rather than read for every piece (the signal's getter checks its receiver each time).
  let aborted = false;
  const onAbort = (): void => {
    aborted = true;
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const onPart = (part: TurnPart): void => {
    switch (part.type) {
      case 'text':
        if (aborted || part.text === '') break;
        text += part.text;
        stepText += part.text;
        input.onDelta?.(part.text, text);
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
  } finally {
    signal?.removeEventListener('abort', onAbort);
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
