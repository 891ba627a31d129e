// Who a conversation turn runs for, what the transport hears while it runs, and what a turn's run
// hands its settle. Shared by the turn's phases and the transports (Socket.IO, SSE; voice and embedded
// visitors later).
import type { Actor } from '../../platform/http/actor.js';
import type { ToolStatus } from '../../ai/model-stream.js';
import type { CreditUser } from '../credits/payer.js';
import type { SubagentEntry, ToolCallEntry } from '../history/history.tables.js';
import type { NumberApprovalFrame } from '../approvals/approval-gate.js';

/** A signed-in person, or an embedded page's visitor of one twin (no account: a visitor session's id). */
export type TurnCaller =
  | { kind: 'person'; actor: Actor }
  /** `sessionId`: the visitor session the turn came through (its embedding page's guidance waits there). */
  | { kind: 'visitor'; twinId: string; visitorId: string; sessionId?: string };

/** The embed session whose page may guide this turn: a visitor's, or a launch session's (behaviour 14). */
export function embedSessionOf(caller: TurnCaller): string | null {
  if (caller.kind === 'visitor') return caller.sessionId ?? null;
  return caller.actor.launchScope ? caller.actor.sessionId : null;
}

/** Who asks, as the turn's records and caps know them. */
export interface Asker {
  /** The twin the turn runs in: the person's current twin, or the one the visitor is bound to. */
  twinId: string | null;
  /** The person's account id, or the visitor's id: the records' user, counted by the per-user cap. */
  id: string;
  /** Who uses the credits (credits/payer.ts). */
  user: CreditUser;
}

export function askerOf(caller: TurnCaller): Asker {
  if (caller.kind === 'visitor') return { twinId: caller.twinId, id: caller.visitorId, user: { kind: 'visitor', visitorId: caller.visitorId } };
  const { actor } = caller;
  return { twinId: actor.twinId, id: actor.userId, user: { kind: 'person', userId: actor.userId } };
}

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
  /** An approval card of the turn, and its ending, as the answer's next numbered frame (approval-gate.ts). */
  onApproval?: NumberApprovalFrame;
  /** Aborting it ends the turn gracefully (cancel_request, closed SSE request). */
  signal?: AbortSignal;
}

/** What a turn's run produced, for its settle: the answer, what it used and cost, and its working detail. */
export interface RunOutcome {
  text: string;
  cancelled: boolean;
  emptyReply: boolean;
  failed?: { message: string };
  /** Every model call of the run (subagents' included). */
  usage: { inputTokens: number; outputTokens: number };
  /** What the usage costs; the settle charges 0 for a failed run. */
  cost: number;
  /** The models used, the answering one first. */
  models: string[];
  toolCalls: ToolCallEntry[];
  subagents: SubagentEntry[];
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
