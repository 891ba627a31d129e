// Answers that outlive the page: every frame of an answer is numbered, and a reloaded page or a second
// tab follows a running answer from the service (GET /api/ai/stream/{historyId}: the frames after a seq,
// then live to done), finds the running ones (history?status=streaming), and stops one from any tab
// (POST /api/ai/stream/{historyId}/cancel).
import { ApiError, type FailureBody } from '../api/api-error';
import { rawFetch, tokenStore } from '../api/client';
import type { AskEvent } from './ask';
import { readSseFrames, type SseFrame } from './sse';
import type { ApprovalCard } from './stream-assembly';

export interface RunningAnswer {
  _id: string;
  conversationId: string;
  question: string;
}

/** The SSE frame as the event the chat assembles (null for frames it does not show); throws for an error frame. */
export function frameEvent(frame: SseFrame): AskEvent | null {
  switch (frame.type) {
    case 'stream':
      return { kind: 'sse-chunk', delta: String(frame.delta ?? frame.prompt ?? '') };
    case 'tool':
      return { kind: 'tool', name: String(frame.name), status: String(frame.status) };
    case 'approval':
      return { kind: 'approval', card: frame as unknown as ApprovalCard };
    case 'approval_decided':
      return { kind: 'approval-decided', approvalId: String(frame.approvalId) };
    case 'complete': {
      const outputs = Array.isArray(frame.outputs) ? frame.outputs : [];
      return {
        kind: 'complete',
        answer: String(outputs[0] ?? ''),
        historyId: frame.historyId as string | undefined,
        conversationId: frame.conversationId as string | undefined,
        credits: frame.credits as number | undefined,
      };
    }
    case 'error': {
      const error = (frame.error ?? {}) as FailureBody;
      throw new ApiError(502, { success: false, message: error.message, code: error.code });
    }
    default:
      return null;
  }
}

/** The caller's answers still running (newest first). */
export async function runningAnswers(): Promise<RunningAnswer[]> {
  const response = await rawFetch('/api/user/history?status=streaming&limit=10');
  if (!response.ok) return [];
  return ((await response.json()) as { data?: RunningAnswer[] }).data ?? [];
}

/**
 * Follows an answer from the frame after `afterSeq` to its end, reporting its events; a cancelled answer
 * ends with done and no complete: reported as stopped.
 */
export async function followAnswer(historyId: string, afterSeq: number, signal: AbortSignal, emit: (event: AskEvent) => void): Promise<void> {
  const response = await fetch(`/api/ai/stream/${historyId}?after=${afterSeq}`, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${tokenStore.get() ?? ''}` },
    signal,
  });
  if (!response.ok || !response.body) throw new ApiError(response.status, (await response.json().catch(() => ({}))) as FailureBody);
  let completed = false;
  for await (const frame of readSseFrames(response.body)) {
    const event = frameEvent(frame);
    if (event?.kind === 'complete') completed = true;
    if (event) emit(event);
  }
  if (!completed) emit({ kind: 'stopped' });
}

/** Stops an answer wherever it runs (this tab or another). */
export async function cancelAnswer(historyId: string): Promise<void> {
  await rawFetch(`/api/ai/stream/${historyId}/cancel`, { method: 'POST' });
}
