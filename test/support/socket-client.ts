// socket.io-client helpers for tests: connect with a token the way the web client does, wait for an
// event, and collect RECEIVE_STREAM payloads.
import { io, type Socket } from 'socket.io-client';

export interface ConnectOptions {
  auth?: Record<string, unknown>;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** Resolves with the connected socket; rejects with the connect_error (e.g. a refused token). */
export function connectSocket(base: string, options: ConnectOptions = {}): Promise<Socket> {
  const socket = io(base, {
    path: '/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    auth: options.auth,
    extraHeaders: options.headers,
    query: options.query,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error) => {
      socket.close();
      reject(error);
    });
  });
}

export function nextEvent<T = unknown>(socket: Socket, event: string, timeoutMs = 3_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs);
    socket.once(event, (payload: T) => {
      clearTimeout(timer);
      resolve(payload);
    });
  });
}

/** REGISTER with the spec's user object and wait for connect_success or error. */
export async function register(socket: Socket, userId: string, extra: Record<string, unknown> = {}): Promise<{ event: string; payload: Record<string, unknown> }> {
  const outcome = new Promise<{ event: string; payload: Record<string, unknown> }>((resolve) => {
    socket.once('connect_success', (payload: Record<string, unknown>) => resolve({ event: 'connect_success', payload }));
    socket.once('error', (payload: Record<string, unknown>) => resolve({ event: 'error', payload }));
  });
  socket.emit('REGISTER', { userId, email: 'someone@example.test', profileName: 'Someone', institutionId: '', institutionName: '', ...extra });
  return outcome;
}

export function collect<T = unknown>(socket: Socket, event: string): T[] {
  const received: T[] = [];
  socket.on(event, (payload: T) => received.push(payload));
  return received;
}
