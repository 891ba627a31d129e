// The Socket.IO side of conversations (spec, Events): who may connect, REGISTER / UNSUBSCRIBE /
// cancel_request / cancel_streaming, and the StreamRouter the Q&A route uses to stream to a socket of
// this process (a turn runs where its socket is: turn-handoff.ts) and to hear a cancel received by any
// process (through the event bus).
import type { Server as HttpServer } from 'node:http';
import { z } from 'zod';
import type { VerifyToken } from '../../platform/http/auth-guard.js';
import type { EventBus } from '../../platform/realtime/bus.js';
import type { SocketEmit } from '../../platform/realtime/client-frames.js';
import { createSocketServer } from '../../platform/realtime/socket.js';
import { ConnectRefusal, type Handshake, type RealtimeSocket } from '../../platform/realtime/socket-io.js';
import { AUTH_INVALIDATE_CHANNEL, authInvalidation, type AuthInvalidation } from '../auth/session-cache.js';

export const SOCKET_EVENTS = {
  register: 'REGISTER',
  unsubscribe: 'UNSUBSCRIBE',
  cancelRequest: 'cancel_request',
  cancelStreaming: 'cancel_streaming',
  /** {historyId, afterSeq}: the answer's frames after afterSeq, then live to its end, on this socket. */
  resumeStream: 'RESUME_STREAM',
  receiveStream: 'RECEIVE_STREAM',
  connectSuccess: 'connect_success',
  /** A socket that did not REGISTER in time is told so, then disconnected. */
  connectTimeout: 'connect_timeout',
  error: 'error',
} as const;

/** Bus channels: a cancel received by one process reaches the turn wherever it runs. */
export const TURN_CANCEL_CHANNEL = 'turn.cancel';
export const STREAM_CANCEL_CHANNEL = 'turn.cancel_streaming';

export const SOCKET_MESSAGES = {
  authRequired: 'Authentication Required',
  invalidToken: 'Invalid or expired token',
  registered: 'Registered',
  userMismatch: 'REGISTER refused: the user does not match the signed-in session',
  notRegistered: 'Send REGISTER first',
  registerTimeout: (seconds: number) => `REGISTER was not received within ${seconds} seconds of connecting; connect again and send REGISTER`,
} as const;

/** How long a connected socket may take to send its first REGISTER (the spec: it is sent on connect). */
export const REGISTER_TIMEOUT_MS = 30_000;

/** The spec's streaming payload: prompt is the whole answer so far, delta the last piece. */
export interface StreamPayload {
  prompt: string;
  delta: string;
  type: 'STREAM';
  /** The frame's place in its answer, and the answer (contract: resumable answers). */
  seq?: number;
  historyId?: string;
}

/** cancel_request / cancel_streaming as they cross the bus: the registered person and the socket it came from (a launch session's socket cancels turns of its twin only). */
const cancelMessage = z.object({ userId: z.string(), socketId: z.string(), launchTwinId: z.string().nullish() });
export type CancelRequest = z.infer<typeof cancelMessage>;

declare module '../../platform/realtime/bus.js' {
  interface BusEvents {
    'turn.cancel': CancelRequest;
    'turn.cancel_streaming': CancelRequest;
  }
}

/** What a socket carries (socket.data). */
interface SocketData {
  /** The token it connected with: a revocation checks it again. */
  token: string;
  sessionUserId: string;
  sessionId: string;
  /** The user this socket registered for (REGISTER), null before or after UNSUBSCRIBE. */
  userId: string | null;
  /** A launch session's twin: the socket is a tab of the person in that twin only (behaviour 16). */
  launchTwinId: string | null;
}

type StreamSocket = RealtimeSocket<SocketData>;

export interface StreamRouter {
  /** This process holds the socket and it is registered for this user. */
  holds(socketId: string, userId: string): boolean;
  /** Starts an answer on this socket: clears a cancel_streaming left from an earlier answer. */
  beginAnswer(socketId: string): void;
  /**
   * Sends RECEIVE_STREAM to the socket if this process still holds it, unless cancel_streaming stopped
   * this answer; returns whether the answer is still being sent.
   */
  emitChunk(socketId: string, payload: StreamPayload): boolean;
  /** Sends an event to one socket of this process, if it still holds it (a turn's TOOL_STATUS). */
  emitEvent(socketId: string, ...emit: SocketEmit): void;
  /** Ends the answer on this socket (forgets its cancel_streaming state). */
  endAnswer(socketId: string): void;
  /**
   * Sends an event to every registered socket (tab) of a user on this process: the full sessions' tabs,
   * and the launch sessions' tabs of `twinId` (the twin the event is of), never another twin's. The
   * person's tabs on other processes hear it through the bus (platform/realtime/person-tabs.ts).
   */
  emitToUser(userId: string, twinId: string, ...emit: SocketEmit): void;
  /**
   * Calls handler when cancel_request arrives from this user's socket (any socket if none given; a launch
   * session's socket only for a turn of its twin, `twinId`).
   */
  onCancel(target: { userId: string; socketId?: string; twinId?: string | null }, handler: (cancel: CancelRequest) => void): () => void;
  /** Serves RESUME_STREAM of registered sockets (answer-resume.ts); the signal aborts when the socket goes. */
  serveResume(handler: ResumeHandler): void;
  /** Disconnects this process's sockets and stops serving new ones (before the HTTP server closes). */
  closeSockets(): void;
  close(): Promise<void>;
}

/** `launchTwinId`: the twin a launch session's socket is confined to. */
export type ResumeHandler = (request: { userId: string; launchTwinId: string | null; socketId: string; historyId: string; afterSeq: number }, signal: AbortSignal) => Promise<void>;

const resumePayload = z.object({ historyId: z.string().min(1).max(100), afterSeq: z.number().int().min(0).default(0) });

export interface StreamSocketsDeps {
  /** The app's HTTP server: the sockets are served on it under /socket.io/. */
  httpServer: HttpServer;
  bus: EventBus;
  verify: VerifyToken;
  /** REGISTER_TIMEOUT_MS unless given (tests). */
  registerTimeoutMs?: number;
}

const userPayload = z.object({ userId: z.string().min(1) }).passthrough();

const userRoom = (userId: string) => `user:${userId}`;
/** A launch session's tabs of the person: they hear only what is of their twin. */
const launchRoom = (userId: string, twinId: string) => `user:${userId}:twin:${twinId}`;
const roomOf = (userId: string, launchTwinId: string | null) => (launchTwinId ? launchRoom(userId, launchTwinId) : userRoom(userId));

export async function attachStreamSockets({ httpServer, bus, verify, registerTimeoutMs = REGISTER_TIMEOUT_MS }: StreamSocketsDeps): Promise<StreamRouter> {
  /** Answers streaming from this process, by socket id: muted once cancel_streaming arrived. */
  const answers = new Map<string, { muted: boolean }>();
  const cancelHandlers = new Set<{ userId: string; socketId?: string; twinId?: string | null; handler: (cancel: CancelRequest) => void }>();
  let resumeHandler: ResumeHandler | undefined;

  async function authorize(handshake: Handshake): Promise<SocketData> {
    const token = handshakeToken(handshake);
    if (!token) throw refusal(SOCKET_MESSAGES.authRequired);
    const actor = await verify(token).catch(() => null);
    if (!actor) throw refusal(SOCKET_MESSAGES.invalidToken);
    return { token, sessionUserId: actor.userId, sessionId: actor.sessionId, userId: null, launchTwinId: actor.launchScope?.twinId ?? null };
  }

  /**
   * Sockets connected but not yet registered → their REGISTER deadline. A registered socket keeps no
   * timer, closure or listener of its own: every socket shares the handlers below, so 10,000 idle tabs
   * cost what the socket server keeps for them (docs/decisions.md, "Idle sockets").
   */
  const deadlines = new Map<StreamSocket, NodeJS.Timeout>();

  function registerTimedOut(socket: StreamSocket): void {
    deadlines.delete(socket);
    // A socket that never registers can receive nothing: tell the client why, then let it go.
    const message = SOCKET_MESSAGES.registerTimeout(Number((registerTimeoutMs / 1000).toFixed(1)));
    socket.emit(SOCKET_EVENTS.connectTimeout, { success: false, message, code: 'REGISTER_TIMEOUT' });
    socket.disconnect(true);
  }

  /** Ends a socket's wait for REGISTER: it registered, or it went away first. */
  function clearDeadline(socket: StreamSocket): void {
    const deadline = deadlines.get(socket);
    if (deadline === undefined) return;
    clearTimeout(deadline);
    deadlines.delete(socket);
  }

  function register(socket: StreamSocket, payload: unknown): void {
    const parsed = userPayload.safeParse(payload);
    // The payload names a user; only the signed-in one is accepted, or anyone could receive
    // someone else's stream by naming them.
    if (!parsed.success || parsed.data.userId !== socket.data.sessionUserId) {
      fail(socket, SOCKET_MESSAGES.userMismatch, 'SOCKET_USER_MISMATCH');
      return;
    }
    clearDeadline(socket);
    socket.data.userId = parsed.data.userId;
    socket.join(roomOf(parsed.data.userId, socket.data.launchTwinId));
    socket.emit(SOCKET_EVENTS.connectSuccess, { success: true, message: SOCKET_MESSAGES.registered, socketId: socket.id });
  }

  function unsubscribe(socket: StreamSocket): void {
    if (socket.data.userId) socket.leave(roomOf(socket.data.userId, socket.data.launchTwinId));
    socket.data.userId = null;
  }

  function relayCancel(socket: StreamSocket, channel: typeof TURN_CANCEL_CHANNEL | typeof STREAM_CANCEL_CHANNEL): void {
    const userId = socket.data.userId;
    if (!userId) return fail(socket, SOCKET_MESSAGES.notRegistered, 'SOCKET_NOT_REGISTERED');
    const { launchTwinId } = socket.data;
    const message: CancelRequest = launchTwinId ? { userId, socketId: socket.id, launchTwinId } : { userId, socketId: socket.id };
    void bus.publish(channel, message).catch(() => fail(socket, 'The cancel could not be delivered; try again', 'CANCEL_FAILED'));
  }

  function resume(socket: StreamSocket, payload: unknown): void {
    const userId = socket.data.userId;
    if (!userId) return fail(socket, SOCKET_MESSAGES.notRegistered, 'SOCKET_NOT_REGISTERED');
    const parsed = resumePayload.safeParse(payload);
    if (!parsed.success) return fail(socket, 'RESUME_STREAM needs {historyId, afterSeq}', 'INVALID_RESUME');
    if (!resumeHandler) return fail(socket, 'Resuming is not available', 'RESUME_FAILED');
    const gone = new AbortController();
    const abort = () => gone.abort();
    socket.onGone(abort);
    resumeHandler({ userId, launchTwinId: socket.data.launchTwinId, socketId: socket.id, ...parsed.data }, gone.signal)
      .catch((error: unknown) => {
        const { message, code } = error as { message?: string; code?: string };
        fail(socket, message ?? 'The answer could not be resumed', code ?? 'RESUME_FAILED');
      })
      // A socket that resumes many answers in its life keeps no listener of each.
      .finally(() => socket.offGone(abort));
  }

  /** Every event of every socket, through one function rather than one closure per event and socket. */
  function onEvent(socket: StreamSocket, event: string, payload?: unknown): void {
    if (event === SOCKET_EVENTS.register) register(socket, payload);
    else if (event === SOCKET_EVENTS.unsubscribe) unsubscribe(socket);
    else if (event === SOCKET_EVENTS.resumeStream) resume(socket, payload);
    else if (event === SOCKET_EVENTS.cancelRequest) relayCancel(socket, TURN_CANCEL_CHANNEL);
    else if (event === SOCKET_EVENTS.cancelStreaming) relayCancel(socket, STREAM_CANCEL_CHANNEL);
  }

  const realtime = createSocketServer<SocketData>(httpServer, {
    authorize,
    connection: (socket) => void deadlines.set(socket, setTimeout(registerTimedOut, registerTimeoutMs, socket)),
    event: onEvent,
    gone: clearDeadline,
  });
  const { sockets } = realtime;

  const offCancel = await bus.subscribe(
    TURN_CANCEL_CHANNEL,
    (cancel) => {
      for (const entry of [...cancelHandlers]) {
        if (entry.userId !== cancel.userId) continue;
        if (entry.socketId !== undefined && entry.socketId !== cancel.socketId) continue;
        if (cancel.launchTwinId && cancel.launchTwinId !== entry.twinId) continue;
        entry.handler(cancel);
      }
    },
    { schema: cancelMessage },
  );
  const offMute = await bus.subscribe(
    STREAM_CANCEL_CHANNEL,
    (cancel) => {
      const answer = answers.get(cancel.socketId);
      if (answer) answer.muted = true;
    },
    { schema: cancelMessage },
  );
  // A revoked session or a changed account: sockets opened with it must not keep receiving.
  const offAuth = await bus.subscribe(
    AUTH_INVALIDATE_CHANNEL,
    (change) => {
      // Let the session cache drop its entry first (it listens on the same channel).
      setTimeout(() => void recheckSockets(change), 0);
    },
    { schema: authInvalidation },
  );

  async function recheckSockets(change: AuthInvalidation): Promise<void> {
    for (const socket of [...sockets.sockets.values()]) {
      const hit = 'userId' in change ? socket.data.sessionUserId === change.userId : change.sessionIds.includes(socket.data.sessionId);
      if (!hit) continue;
      const actor = await verify(socket.data.token).catch(() => null);
      if (!actor || actor.userId !== socket.data.sessionUserId) socket.disconnect(true);
    }
  }

  const localSocket = (socketId: string) => sockets.sockets.get(socketId);

  return {
    holds(socketId, userId) {
      return localSocket(socketId)?.data.userId === userId;
    },
    beginAnswer(socketId) {
      answers.set(socketId, { muted: false });
    },
    emitChunk(socketId, payload) {
      if (answers.get(socketId)?.muted) return false;
      // Gone since the turn started (closed tab): the turn goes on, its pieces have nowhere to go.
      localSocket(socketId)?.emit(SOCKET_EVENTS.receiveStream, payload);
      return true;
    },
    emitEvent(socketId, ...[event, payload]) {
      localSocket(socketId)?.emit(event, payload);
    },
    endAnswer(socketId) {
      answers.delete(socketId);
    },
    emitToUser(userId, twinId, ...[event, payload]) {
      sockets.emitToRooms([userRoom(userId), launchRoom(userId, twinId)], event, payload);
    },
    onCancel(target, handler) {
      const entry = { ...target, handler };
      cancelHandlers.add(entry);
      return () => void cancelHandlers.delete(entry);
    },
    serveResume(handler) {
      resumeHandler = handler;
    },
    closeSockets() {
      realtime.close();
    },
    async close() {
      resumeHandler = undefined;
      await Promise.all([offCancel(), offMute(), offAuth()]).catch(() => {});
      cancelHandlers.clear();
      answers.clear();
      for (const deadline of deadlines.values()) clearTimeout(deadline);
      deadlines.clear();
    },
  };
}

function fail(socket: StreamSocket, message: string, code: string): void {
  socket.emit(SOCKET_EVENTS.error, { success: false, message, code });
}

/** The session token: `auth.token`, then `x-access-token`, then `Authorization: Bearer`, then `?token=`. */
function handshakeToken({ auth, headers, query }: Handshake): string | null {
  const fromAuth = typeof auth?.token === 'string' ? auth.token : undefined;
  const header = headers['x-access-token'];
  const bearer = typeof headers.authorization === 'string' ? /^Bearer\s+(.+)$/i.exec(headers.authorization)?.[1] : undefined;
  const fromQuery = typeof query.token === 'string' ? query.token : undefined;
  const token = fromAuth ?? (typeof header === 'string' ? header : undefined) ?? bearer ?? fromQuery;
  return token?.trim() || null;
}

/** A refused handshake: the client's connect_error carries the message and data. */
function refusal(message: string): ConnectRefusal {
  return new ConnectRefusal(message, { success: false, message });
}
