// The frames of an answer, as the spec's Events table names them (the `type` field), declared in the
// client frame map with the Socket.IO event each goes as (platform/realtime/client-frames.ts). One place
// builds them, so the route, voice and embedded visitors send the same shapes.
import type { ToolStatus } from '../../ai/model-stream.js';
import type { SseFrameOf } from '../../platform/realtime/client-frames.js';
import type { StreamPayload } from './socket-events.js';

export const SSE_CONNECTED_MESSAGE = 'Stream established';

/** A tool call's progress: the SSE `tool` frame's fields and the TOOL_STATUS payload. */
export interface ToolFrame extends Partial<Numbering> {
  name: string;
  status: ToolStatus;
}

/** What every frame of an answer carries once numbered (answer-frames.ts): its place and its answer. */
export interface Numbering {
  seq: number;
  historyId: string;
}

/** The end frames' fields, as SSE writes them and as the socket events of the same name carry them. */
export interface CompleteFields {
  success: boolean;
  /** Tokens used by the turn (input + output). */
  usage: number;
  outputs: unknown[];
  [extra: string]: unknown;
}

declare module '../../platform/realtime/client-frames.js' {
  interface ClientFrames {
    connected: { sse: { message: string } };
    /** The answer's first numbered frame: its record and conversation. */
    started: { sse: { historyId: string; conversationId: string }; socket: { event: 'STREAM_STARTED'; payload: { historyId: string; conversationId: string; seq: number } } };
    /** `prompt` is the text chunk on SSE (`delta` repeats it: clients read either); on Socket.IO, the whole answer so far. */
    stream: { sse: { prompt: string; delta: string }; socket: { event: 'RECEIVE_STREAM'; payload: StreamPayload } };
    tool: { sse: ToolFrame; socket: { event: 'TOOL_STATUS'; payload: ToolFrame } };
    complete: { sse: CompleteFields; socket: { event: 'STREAM_COMPLETE'; payload: CompleteFields & Numbering } };
    error: { sse: { error: { message: string; code?: string } }; socket: { event: 'STREAM_ERROR'; payload: { error: { message: string; code?: string } } & Numbering } };
    /** No fields. */
    done: { sse: object; socket: { event: 'STREAM_DONE'; payload: Numbering } };
  }
}

export const sseFrames = {
  connected: (): SseFrameOf<'connected'> => ({ type: 'connected', message: SSE_CONNECTED_MESSAGE }),
  started: (historyId: string, conversationId: string): SseFrameOf<'started'> => ({ type: 'started', historyId, conversationId }),
  stream: (delta: string): SseFrameOf<'stream'> => ({ type: 'stream', prompt: delta, delta }),
  tool: (name: string, status: ToolStatus): SseFrameOf<'tool'> => ({ type: 'tool', name, status }),
  complete: (fields: { usage: number; outputs: unknown[] } & Record<string, unknown>): SseFrameOf<'complete'> => ({
    type: 'complete',
    success: true,
    ...fields,
  }),
  error: (message: string, code?: string): SseFrameOf<'error'> => ({ type: 'error', error: code ? { message, code } : { message } }),
  done: (): SseFrameOf<'done'> => ({ type: 'done' }),
};
