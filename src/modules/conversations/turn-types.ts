// Who a conversation turn runs for, and what the transport hears while it runs. Shared by runTurn,
// its helpers and the transports (Socket.IO, SSE; voice and embedded visitors later).
import type { Actor } from '../../platform/http/actor.js';
import type { ToolStatus } from '../../ai/model-stream.js';

/** A signed-in person, or (later) an embedded page's visitor of a twin. */
export type TurnCaller = { kind: 'person'; actor: Actor } | { kind: 'visitor'; twinId: string; visitorId: string };

export interface TurnInput {
  /** The conversation's inputs; the question is the last one. */
  inputs: string[];
  assistantId?: string | null;
  conversationId?: string | null;
  ragOnly?: boolean;
  selectedCourse?: { course_id: string; course_name: string } | null;
}

export interface TurnSink {
  /** The turn passed its checks and its history record exists; the model is about to be called. */
  onStart?(info: { historyId: string; conversationId: string }): void;
  onDelta(delta: string, textSoFar: string): void;
  onTool(name: string, status: ToolStatus): void;
  /** Aborting it ends the turn gracefully (cancel_request, closed SSE request). */
  signal?: AbortSignal;
}

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface TurnResult {
  answer: string;
  usage: TurnUsage;
  /** Credits actually charged (0 for a failed turn). */
  credits: number;
  historyId: string;
  conversationId: string;
  cancelled: boolean;
  emptyReply: boolean;
  failed?: { message: string };
}
