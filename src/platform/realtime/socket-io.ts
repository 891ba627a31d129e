// Socket.IO (protocol 5) on the engine (engine-io.ts), as far as the service speaks it: the main
// namespace, a connection checked by `authorize` (its refusal is the client's connect_error), events
// both ways as JSON, rooms, and a disconnect from either side. Not served: other namespaces (refused as
// Socket.IO refuses an unknown one), binary payloads, and acknowledgements the server would await
// (a client's own acknowledgement id is accepted and never answered, as the service's handlers never did).
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Engine, type EngineOptions, type EngineSession } from './engine-io.js';
import { textFrame } from './ws-engine.js';

/** What a connection brings: `auth` from the client's CONNECT, the opening request's headers and query. */
export interface Handshake {
  auth: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  query: Record<string, string>;
}

/** A refused connection: the client's connect_error carries `message` and `data`. */
export class ConnectRefusal extends Error {
  constructor(
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Why a socket went (Socket.IO's reasons, as its clients and servers name them). */
export type GoneReason = 'server namespace disconnect' | 'client namespace disconnect' | 'transport close' | 'transport error' | 'ping timeout' | 'parse error' | 'server shutting down' | 'forced close';

type GoneListener = (reason: GoneReason) => void;

/** What a session keeps until its CONNECT: the opening request's headers and query. */
interface Opening {
  headers: IncomingHttpHeaders;
  query: Record<string, string>;
}

/** One connected socket of the main namespace. Its listeners are the server's, shared by every socket. */
export class RealtimeSocket<Data> {
  /** Rooms joined: none, one (the usual), or several. */
  rooms: string | string[] | null = null;
  connected = true;
  private goneListeners: GoneListener | GoneListener[] | null = null;

  constructor(
    readonly id: string,
    public data: Data,
    readonly session: EngineSession,
    private readonly server: SocketServer<Data>,
  ) {}

  emit(event: string, payload?: unknown): void {
    if (this.connected) this.session.send(eventPacket(event, payload));
  }

  join(room: string): void {
    if (!this.connected || this.inRoom(room)) return;
    this.rooms = this.rooms === null ? room : typeof this.rooms === 'string' ? [this.rooms, room] : [...this.rooms, room];
    this.server.addToRoom(room, this);
  }

  leave(room: string): void {
    if (!this.inRoom(room)) return;
    this.rooms = typeof this.rooms === 'string' ? null : this.rooms!.filter((name) => name !== room);
    if (Array.isArray(this.rooms) && this.rooms.length === 1) this.rooms = this.rooms[0]!;
    this.server.removeFromRoom(room, this);
  }

  inRoom(room: string): boolean {
    return this.rooms === room || (Array.isArray(this.rooms) && this.rooms.includes(room));
  }

  /** Leaves the namespace: the client hears the disconnect; `close` also closes its connection. */
  disconnect(close = false): void {
    if (!this.connected) return;
    this.session.send('1');
    this.server.gone(this, 'server namespace disconnect');
    if (close) this.session.close();
  }

  /** `listener` runs once, when the socket goes. */
  onGone(listener: GoneListener): void {
    const listeners = this.goneListeners;
    this.goneListeners = listeners === null ? listener : typeof listeners === 'function' ? [listeners, listener] : [...listeners, listener];
  }

  offGone(listener: GoneListener): void {
    const listeners = this.goneListeners;
    if (listeners === listener) this.goneListeners = null;
    else if (Array.isArray(listeners)) {
      const rest = listeners.filter((candidate) => candidate !== listener);
      this.goneListeners = rest.length === 0 ? null : rest.length === 1 ? rest[0]! : rest;
    }
  }

  /** Called by the server once, after it marked the socket gone. */
  wentAway(reason: GoneReason): void {
    const listeners = this.goneListeners;
    this.goneListeners = null;
    if (typeof listeners === 'function') listeners(reason);
    else if (listeners) for (const listener of listeners) listener(reason);
  }
}

export interface SocketServerOptions<Data> extends EngineOptions {
  /** Checks a connection; resolves with its data, or rejects (a ConnectRefusal's message and data reach the client). */
  authorize: (handshake: Handshake) => Promise<Data>;
  /** A socket connected (after `authorize`). */
  connection?: (socket: RealtimeSocket<Data>) => void;
  /** An event from a connected socket: its name and first argument. */
  event?: (socket: RealtimeSocket<Data>, event: string, payload: unknown) => void;
  /** A connected socket went (before its own `onGone` listeners run). */
  gone?: (socket: RealtimeSocket<Data>, reason: GoneReason) => void;
}

const EMPTY_QUERY: Record<string, string> = Object.freeze({}) as Record<string, string>;

export class SocketServer<Data> {
  /** This process's connected sockets by id. */
  readonly sockets = new Map<string, RealtimeSocket<Data>>();
  readonly engine: Engine;
  private readonly rooms = new Map<string, Set<RealtimeSocket<Data>>>();
  /** Sessions between their opening and their CONNECT. */
  private readonly openings = new WeakMap<EngineSession, Opening>();

  constructor(private readonly options: SocketServerOptions<Data>) {
    this.engine = new Engine(
      {
        open: (session, request, query) => this.opened(session, request, query),
        message: (session, text) => this.message(session, text),
        closed: (session, reason) => {
          const socket = session.owner as RealtimeSocket<Data> | null;
          if (socket?.connected) this.gone(socket, reason as GoneReason);
        },
      },
      options,
    );
  }

  /** Sends an event to every socket of this process in any of `rooms` (once each). */
  emitToRooms(rooms: readonly string[], event: string, payload?: unknown): void {
    let members: Iterable<RealtimeSocket<Data>> | undefined;
    if (rooms.length === 1) members = this.rooms.get(rooms[0]!);
    else {
      const union = new Set<RealtimeSocket<Data>>();
      for (const room of rooms) for (const socket of this.rooms.get(room) ?? []) union.add(socket);
      members = union;
    }
    if (!members) return;
    const text = eventPacket(event, payload);
    let frame: Buffer | undefined;
    for (const socket of members) {
      if (!socket.connected) continue;
      frame ??= textFrame('4' + text);
      socket.session.sendFramed(text, frame);
    }
  }

  /** Disconnects every socket and closes every session. */
  close(): void {
    for (const socket of [...this.sockets.values()]) socket.disconnect(true);
    this.engine.close();
  }

  addToRoom(room: string, socket: RealtimeSocket<Data>): void {
    let members = this.rooms.get(room);
    if (!members) this.rooms.set(room, (members = new Set()));
    members.add(socket);
  }

  removeFromRoom(room: string, socket: RealtimeSocket<Data>): void {
    const members = this.rooms.get(room);
    if (!members) return;
    members.delete(socket);
    if (members.size === 0) this.rooms.delete(room);
  }

  gone(socket: RealtimeSocket<Data>, reason: GoneReason): void {
    if (!socket.connected) return;
    this.sockets.delete(socket.id);
    const rooms = socket.rooms;
    socket.rooms = null;
    if (typeof rooms === 'string') this.removeFromRoom(rooms, socket);
    else if (rooms) for (const room of rooms) this.removeFromRoom(room, socket);
    if (socket.session.owner === socket) socket.session.release(Date.now());
    socket.connected = false;
    this.options.gone?.(socket, reason);
    socket.wentAway(reason);
  }

  private opened(session: EngineSession, request: IncomingMessage, query: URLSearchParams): void {
    this.openings.set(session, { headers: request.headers, query: Object.fromEntries(query) });
  }

  private message(session: EngineSession, text: string): void {
    const type = text.charCodeAt(0) - 0x30;
    let at = 1;
    let namespace = '/';
    if (text.charCodeAt(1) === 0x2f) {
      const comma = text.indexOf(',', 1);
      namespace = comma === -1 ? text.slice(1) : text.slice(1, comma);
      at = comma === -1 ? text.length : comma + 1;
    }
    if (type === 0) return this.connect(session, namespace, text.slice(at));
    const socket = session.owner as RealtimeSocket<Data> | null;
    if (type === 2) {
      // An event: an acknowledgement id (digits) may come before its JSON array.
      while (at < text.length && text.charCodeAt(at) >= 0x30 && text.charCodeAt(at) <= 0x39) at++;
      const args = parseJson(text.slice(at));
      if (!Array.isArray(args) || typeof args[0] !== 'string') return session.close('parse error');
      if (namespace === '/' && socket?.connected) this.options.event?.(socket, args[0], args[1]);
      return;
    }
    if (type === 1) {
      if (namespace === '/' && socket?.connected) this.gone(socket, 'client namespace disconnect');
      return;
    }
    // 3 (an acknowledgement of an event the server sent) is never awaited; anything else (binary, a
    // client's CONNECT_ERROR, garbage) ends the connection as a parse error.
    if (type !== 3) session.close('parse error');
  }

  private connect(session: EngineSession, namespace: string, body: string): void {
    if (namespace !== '/') {
      session.send(`4${namespace},${JSON.stringify({ message: 'Invalid namespace' })}`);
      return;
    }
    if (session.owner !== null) return;
    const auth = body ? parseJson(body) : {};
    if (auth === undefined || typeof auth !== 'object' || auth === null || Array.isArray(auth)) return session.close('parse error');
    const opening = this.openings.get(session) ?? { headers: {}, query: EMPTY_QUERY };
    // Claimed while the check runs: a second CONNECT meanwhile is ignored.
    session.claim(CHECKING);
    const handshake: Handshake = { auth: auth as Record<string, unknown>, headers: opening.headers, query: opening.query };
    Promise.resolve(handshake).then(this.options.authorize).then(
      (data) => {
        if (!session.isOpen) return;
        this.openings.delete(session);
        const socket = new RealtimeSocket(randomBytes(15).toString('base64url'), data, session, this);
        session.claim(socket);
        this.sockets.set(socket.id, socket);
        session.send('0' + JSON.stringify({ sid: socket.id }));
        this.options.connection?.(socket);
      },
      (error: unknown) => {
        if (!session.isOpen) return;
        session.release(Date.now());
        const refusal = error instanceof ConnectRefusal ? { message: error.message, data: error.data } : { message: 'Connection refused' };
        session.send('4' + JSON.stringify(refusal));
      },
    );
  }
}

/** The owner of a session whose CONNECT is being checked. */
const CHECKING = Symbol('checking');

function eventPacket(event: string, payload: unknown): string {
  return '2' + JSON.stringify(payload === undefined ? [event] : [event, payload]);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
