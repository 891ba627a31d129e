// How one answer is put together from what the transports deliver: Socket.IO's RECEIVE_STREAM carries
// the whole text so far (prompt) and the last piece (delta); SSE's stream frames carry a piece; the final
// answer replaces what streamed (the spec: the final response may differ from the prompt streamed).

/** The service's words when the model ended a turn without text (behaviour 11). */
export const EMPTY_ANSWER_NOTICE = 'The model returned an empty answer. Please try again.';

export interface ToolActivity {
  name: string;
  status: string;
}

export interface ApprovalCard {
  approvalId: string;
  server: string;
  tool: string;
  arguments: unknown;
  expiresAt: string;
  decision?: string;
}

export type AnswerStatus = 'waiting' | 'streaming' | 'complete' | 'cancelled' | 'failed';

export interface AnswerState {
  text: string;
  status: AnswerStatus;
  tools: ToolActivity[];
  historyId?: string;
  conversationId?: string;
  credits?: number;
  /** The model ended without text: the person is asked to try again. */
  emptyNotice: boolean;
  error?: unknown;
}

export type StreamEvent =
  | { kind: 'socket-chunk'; prompt: string; delta: string }
  | { kind: 'sse-chunk'; delta: string }
  | { kind: 'tool'; name: string; status: string }
  | { kind: 'complete'; answer: string; historyId?: string; conversationId?: string; credits?: number; cancelled?: boolean }
  | { kind: 'stopped' }
  | { kind: 'failed'; error: unknown };

export const initialAnswer = (): AnswerState => ({ text: '', status: 'waiting', tools: [], emptyNotice: false });

export function applyStreamEvent(state: AnswerState, event: StreamEvent): AnswerState {
  if (state.status === 'complete' || state.status === 'failed') return state;
  switch (event.kind) {
    case 'socket-chunk': {
      if (state.status === 'cancelled') return state;
      // prompt is the whole answer so far; a payload without it still carries its piece.
      const text = event.prompt.length > 0 ? event.prompt : state.text + event.delta;
      return { ...state, text, status: 'streaming' };
    }
    case 'sse-chunk':
      if (state.status === 'cancelled') return state;
      return { ...state, text: state.text + event.delta, status: 'streaming' };
    case 'tool': {
      const tools = state.tools.filter((tool) => tool.name !== event.name);
      return { ...state, tools: [...tools, { name: event.name, status: event.status }] };
    }
    case 'complete': {
      const empty = event.answer === EMPTY_ANSWER_NOTICE;
      return {
        ...state,
        text: empty ? '' : event.answer,
        emptyNotice: empty,
        status: event.cancelled ? 'cancelled' : 'complete',
        historyId: event.historyId,
        conversationId: event.conversationId,
        credits: event.credits,
      };
    }
    case 'stopped':
      return { ...state, status: 'cancelled' };
    case 'failed':
      return { ...state, status: 'failed', error: event.error };
  }
}

/** A cancelled answer's final JSON also settles it (with its history id): let it through once. */
export function settleCancelled(state: AnswerState, event: Extract<StreamEvent, { kind: 'complete' }>): AnswerState {
  if (state.status !== 'cancelled') return applyStreamEvent(state, event);
  return { ...state, text: event.answer || state.text, historyId: event.historyId, conversationId: event.conversationId, credits: event.credits };
}
