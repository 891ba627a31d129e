// The real transports behind ask(): this tab's Socket.IO link (REGISTER on every connect, the spec's
// user object) and the SSE route read with fetch.
import { io, type Socket } from 'socket.io-client';
import { ApiError, type FailureBody } from '../api/api-error';
import { rawFetch, tokenStore } from '../api/client';
import type { AskDeps, AskEvent, ChunkPayload, QandaJson, SocketLink } from './ask';
import { cancelAnswer, followAnswer, frameEvent } from './resume';
import { readSseFrames } from './sse';

export interface SocketUser {
  userId: string;
  email: string;
  profileName: string;
  institutionId: string;
  institutionName: string;
}

export const REGISTER_WAIT_MS = 4_000;

export interface LiveSocket extends SocketLink {
  socket: Socket;
  close(): void;
}

export function createSocketLink(token: string, user: SocketUser): LiveSocket {
  const socket = io({ auth: { token }, transports: ['websocket', 'polling'] });
  let registered: Promise<string>;
  let settle: { resolve(id: string): void; reject(error: Error): void } | null = null;

  const expectRegistration = () => {
    registered = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
    registered.catch(() => {});
  };
  expectRegistration();
  socket.on('connect', () => socket.emit('REGISTER', user));
  socket.on('connect_success', (payload: { socketId?: string }) => settle?.resolve(payload?.socketId ?? socket.id ?? ''));
  socket.on('disconnect', () => expectRegistration());
  socket.on('connect_error', (error) => settle?.reject(error));

  const withinWait = (pending: Promise<string>) =>
    Promise.race([pending, new Promise<string>((_, reject) => setTimeout(() => reject(new Error('The live connection did not answer')), REGISTER_WAIT_MS))]);

  return {
    socket,
    ready() {
      if (!socket.connected && !socket.active) {
        expectRegistration();
        socket.connect();
      }
      return withinWait(registered);
    },
    reconnect() {
      socket.disconnect();
      expectRegistration();
      socket.connect();
      return withinWait(registered);
    },
    onChunk(handler: (payload: ChunkPayload) => void) {
      socket.on('RECEIVE_STREAM', handler);
      return () => void socket.off('RECEIVE_STREAM', handler);
    },
    onTool(handler: (payload: { name: string; status: string }) => void) {
      socket.on('TOOL_STATUS', handler);
      return () => void socket.off('TOOL_STATUS', handler);
    },
    cancel() {
      socket.emit('cancel_request', user);
    },
    close() {
      socket.emit('UNSUBSCRIBE', user);
      socket.disconnect();
    },
  };
}

async function postQanda(body: { inputs: string[]; requestArgs: Record<string, unknown> }): Promise<QandaJson> {
  const response = await rawFetch('/api/ai/personal/qanda', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await response.json()) as QandaJson;
}

async function streamSse(
  body: { inputs: string[]; requestArgs: Record<string, unknown> },
  signal: AbortSignal,
  emit: (event: AskEvent) => void,
  onStarted?: (historyId: string) => void,
): Promise<void> {
  const response = await fetch('/api/ai/personal-stream/qanda-stream', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${tokenStore.get() ?? ''}` },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok || !response.body) throw new ApiError(response.status, (await response.json().catch(() => ({}))) as FailureBody);
  for await (const frame of readSseFrames(response.body)) {
    if (frame.type === 'started' && typeof frame.historyId === 'string') onStarted?.(frame.historyId);
    const event = frameEvent(frame);
    if (event) emit(event);
  }
}

export function askDeps(link: SocketLink | null): AskDeps {
  return { link, postQanda, streamSse, follow: (historyId, signal, emit) => followAnswer(historyId, 0, signal, emit), cancelAnswer };
}
