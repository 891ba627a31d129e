// The frames of an answer, as the spec's Events table names them (the `type` field), declared in the
// client frame map with the Socket.IO event each goes as (platform/realtime/client-frames.ts). One place
// builds them, so the route, voice and embedded visitors send the same shapes.
import type { ToolStatus } from '../../ai/model-stream.js';
import type { SseFrameOf } from '../../platform/realtime/client-frames.js';
import type { StreamPayload } from './socket-events.js';

export const SSE_CONNECTED_MESSAGE = 'Stream established';

/** A tool call's progress: the SSE `tool` frame's fields and the TOOL_STATUS payload. */
export interface ToolFrame {
  name: string;
  status: ToolStatus;
}

declare module '../../platform/realtime/client-frames.js' {
  interface ClientFrames {
    connected: { sse: { message: string } };
    /** `prompt` is the text chunk on SSE (`delta` repeats it: clients read either); on Socket.IO, the whole answer so far. */
    stream: { sse: { prompt: string; delta: string }; socket: { event: 'RECEIVE_STREAM'; payload: StreamPayload } };
    tool: { sse: ToolFrame; socket: { event: 'TOOL_STATUS'; payload: ToolFrame } };
    complete: {
      sse: {
        success: boolean;
        /** Tokens used by the turn (input + output). */
        usage: number;
        outputs: unknown[];
        [extra: string]: unknown;
      };
    };
    error: { sse: { error: { message: string; code?: string } } };
    /** No fields. */
    done: { sse: object };
  }
}

export const sseFrames = {
  connected: (): SseFrameOf<'connected'> => ({ type: 'connected', message: SSE_CONNECTED_MESSAGE }),
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
