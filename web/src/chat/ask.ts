// Asking a question: over Socket.IO when the socket is registered (chunks arrive as RECEIVE_STREAM, the
// answer as the JSON of /api/ai/personal/qanda), over SSE otherwise. An answer of
// {streamingFailed: true} means the service lost this tab's socket: with a historyId the answer runs
// anyway and is followed (chat/resume.ts); without, connect again, REGISTER again and send the same
// question again (the turn did not run), twice at most, then fall back to SSE. SSE answers are
// resumable: a reload does not cancel them, Stop does (by the answer's id).
import type { ApprovalCard, StreamEvent } from './stream-assembly.js';

export interface QuestionArgs {
  question: string;
  assistantId?: string;
  conversationId?: string;
}

export interface QandaJson {
  success: true;
  streamingFailed?: true;
  answer?: string;
  historyId?: string;
  conversationId?: string;
  credits?: number;
  cancelled?: boolean;
}

export interface ChunkPayload {
  prompt?: string;
  delta?: string;
}

/** The registered socket of this tab, as the asking logic needs it. */
export interface SocketLink {
  /** The registered socket's id; rejects when it cannot connect and register in time. */
  ready(): Promise<string>;
  /** Disconnects, connects and registers again; the new socket id. */
  reconnect(): Promise<string>;
  onChunk(handler: (payload: ChunkPayload) => void): () => void;
  /** TOOL_STATUS {name, status} of this person's turns (optional: a link may not offer it). */
  onTool?(handler: (payload: { name: string; status: string }) => void): () => void;
  /** cancel_request: the service ends the turn gracefully and answers with what was said so far. */
  cancel(): void;
}

export type AskEvent =
  | StreamEvent
  | { kind: 'approval'; card: ApprovalCard }
  | { kind: 'approval-decided'; approvalId: string }
  | { kind: 'transport'; transport: 'socket' | 'sse' };

export interface AskDeps {
  link: SocketLink | null;
  postQanda(body: { inputs: string[]; requestArgs: Record<string, unknown> }): Promise<QandaJson>;
  /** Runs the SSE route until it ends, reporting its frames as events (and the answer's id once it started). */
  streamSse(
    body: { inputs: string[]; requestArgs: Record<string, unknown> },
    signal: AbortSignal,
    emit: (event: AskEvent) => void,
    onStarted?: (historyId: string) => void,
  ): Promise<void>;
  /** Follows a running answer to its end (chat/resume.ts): an answer the service runs without this tab's socket. */
  follow?(historyId: string, signal: AbortSignal, emit: (event: AskEvent) => void): Promise<void>;
  /** Stops an answer wherever it runs (the cancel route). */
  cancelAnswer?(historyId: string): Promise<void>;
}

export interface AskHandle {
  finished: Promise<void>;
  stop(): void;
}

export const MAX_RECONNECTS = 2;

export function ask(deps: AskDeps, args: QuestionArgs, emit: (event: AskEvent) => void): AskHandle {
  const abort = new AbortController();
  let via: 'socket' | 'sse' | null = null;
  let stopped = false;
  /** The answer's record once known: Stop of an answer this tab reads over SSE cancels it by its id. */
  let historyId: string | undefined;

  const viaSse = async () => {
    via = 'sse';
    emit({ kind: 'transport', transport: 'sse' });
    // Resumable: a reload does not cancel the answer; the reloaded page follows it (chat/resume.ts).
    const requestArgs = { assistant_id: args.assistantId, conversationId: args.conversationId, resumable: true };
    await deps.streamSse({ inputs: [args.question], requestArgs }, abort.signal, emit, (id) => (historyId = id));
  };

  const viaSocket = async (link: SocketLink): Promise<boolean> => {
    let socketId: string;
    try {
      socketId = await link.ready();
    } catch {
      return false;
    }
    via = 'socket';
    emit({ kind: 'transport', transport: 'socket' });
    const offChunk = link.onChunk((payload) => {
      if (!stopped) emit({ kind: 'socket-chunk', prompt: payload.prompt ?? '', delta: payload.delta ?? '' });
    });
    const offTool = link.onTool?.((payload) => emit({ kind: 'tool', name: String(payload.name), status: String(payload.status) }));
    const off = () => {
      offChunk();
      offTool?.();
    };
    try {
      for (let attempt = 0; ; attempt++) {
        const answer = await deps.postQanda({
          inputs: [args.question],
          requestArgs: { socketId, assistantId: args.assistantId, conversationId: args.conversationId },
        });
        // The service lost this tab's socket but runs the answer: follow it instead of asking again.
        if (answer.streamingFailed && answer.historyId && deps.follow) {
          off();
          via = 'sse';
          historyId = answer.historyId;
          await deps.follow(answer.historyId, abort.signal, emit);
          return true;
        }
        if (!answer.streamingFailed) {
          emit({ kind: 'complete', answer: answer.answer ?? '', historyId: answer.historyId, conversationId: answer.conversationId, credits: answer.credits, cancelled: answer.cancelled });
          return true;
        }
        if (attempt >= MAX_RECONNECTS || stopped) return stopped;
        try {
          socketId = await link.reconnect();
        } catch {
          return false;
        }
      }
    } finally {
      off();
    }
  };

  const finished = (async () => {
    try {
      if (deps.link && (await viaSocket(deps.link))) return;
      if (stopped) return;
      await viaSse();
    } catch (error) {
      if (abort.signal.aborted) return;
      emit({ kind: 'failed', error });
    }
  })();

  return {
    finished,
    stop() {
      if (stopped) return;
      stopped = true;
      emit({ kind: 'stopped' });
      if (via === 'socket') deps.link?.cancel();
      else {
        // A resumable answer goes on when its request closes: cancel it by its id first.
        if (historyId) void deps.cancelAnswer?.(historyId);
        abort.abort();
      }
    },
  };
}
