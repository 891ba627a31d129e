// The frames of the Q&A SSE route, as the spec's Events table names them (the `type` field).
// One place builds them, so the route, voice and embedded visitors send the same shapes.
import type { ToolStatus } from '../../ai/model-stream.js';

export const SSE_CONNECTED_MESSAGE = 'Stream established';

export type SseFrame =
  | { type: 'connected'; message: string }
  /** `prompt` is the text chunk; `delta` repeats it because clients read either. */
  | { type: 'stream'; prompt: string; delta: string }
  | { type: 'tool'; name: string; status: ToolStatus }
  | {
      type: 'complete';
      success: boolean;
      /** Tokens used by the turn (input + output). */
      usage: number;
      outputs: unknown[];
      [extra: string]: unknown;
    }
  | { type: 'error'; error: { message: string; code?: string } }
  | { type: 'done' };

export const sseFrames = {
  connected: (): SseFrame => ({ type: 'connected', message: SSE_CONNECTED_MESSAGE }),
  stream: (delta: string): SseFrame => ({ type: 'stream', prompt: delta, delta }),
  tool: (name: string, status: ToolStatus): SseFrame => ({ type: 'tool', name, status }),
  complete: (fields: { usage: number; outputs: unknown[] } & Record<string, unknown>): SseFrame => ({
    type: 'complete',
    success: true,
    ...fields,
  }),
  error: (message: string, code?: string): SseFrame => ({ type: 'error', error: code ? { message, code } : { message } }),
  done: (): SseFrame => ({ type: 'done' }),
};
