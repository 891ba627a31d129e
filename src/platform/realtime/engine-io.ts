// Engine.IO (protocol 4) as Socket.IO clients speak it: the handshake, long-polling (GET for what the
// server has, POST for what the client sends, packets joined by \x1e), WebSocket directly or as an
// upgrade of a polling session ("2probe" / "3probe" / "5"), and the heartbeat (the server pings, the
// client pongs). What the messages mean is the socket layer's (socket-io.ts).
//
// Why our own: an idle Engine.IO socket of the `engine.io` package keeps about 1.5 KB beside its TCP
// socket (its socket and transport with bound functions and two timers each); here a session is one
// object, and every session's heartbeat is one timer's sweep (docs/decisions.md, "Idle sockets").
// Not served: protocol 3, binary messages (the service's events are JSON), compression, JSONP.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WsEngine, type WsConnection } from './ws-engine.js';

/** Engine.IO's error codes and messages, as its clients know them. */
export const EngineError = {
  unknownTransport: { code: 0, message: 'Transport unknown' },
  unknownSid: { code: 1, message: 'Session ID unknown' },
  badHandshakeMethod: { code: 2, message: 'Bad handshake method' },
  badRequest: { code: 3, message: 'Bad request' },
  unsupportedProtocol: { code: 5, message: 'Unsupported protocol version' },
} as const;

type ErrorKind = (typeof EngineError)[keyof typeof EngineError];

const SEPARATOR = '\x1e';
/** How long a closed polling session waits for its client's next poll to hear the close. */
const CLOSE_POLL_TIMEOUT_MS = 30_000;

export interface EngineOptions {
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** The largest message or POST body accepted, in bytes (Engine.IO's maxHttpBufferSize). */
  maxPayload?: number;
  /** How long an upgrading WebSocket may take to send "5". */
  upgradeTimeoutMs?: number;
  /** A session that has no owner (socket-io.ts: no namespace joined) this long after it opened is closed. */
  claimTimeoutMs?: number;
  /** The session id; the process group's names the process (`2-…`). */
  generateId?: () => string;
  /** Each polling response closes its connection, so the next request is routed again (the process group). */
  closePollingConnections?: boolean;
}

/** What the socket layer hears from the engine. */
export interface EngineHandler {
  /** A session opened by `request`, whose query is already parsed. */
  open(session: EngineSession, request: IncomingMessage, query: URLSearchParams): void;
  message(session: EngineSession, text: string): void;
  closed(session: EngineSession, reason: string): void;
}

const OPEN = 0;
/** Closed for the socket layer; a polling client has yet to hear it on its next poll. */
const CLOSING = 1;
const CLOSED = 2;

/** One Engine.IO session: its transport, what waits to be sent on it, and its heartbeat. */
export class EngineSession {
  state = OPEN;
  /** The WebSocket carrying the session (from the start, or once upgraded); null while polling. */
  ws: WsConnection | null = null;
  /** A WebSocket being probed for an upgrade, and whether it answered the probe. */
  upgrading: WsConnection | null = null;
  upgradeProbed = false;
  upgradeDeadline = 0;
  /** The poll (GET) waiting for packets, and whether a POST is being read. */
  poll: ServerResponse | null = null;
  posting = false;
  /** Encoded packets waiting for the next poll. */
  queue: string[] | null = null;
  /** When the next ping is due; when the pong is due (0: none awaited). */
  pingAt: number;
  pongBy = 0;
  /** When the session opened, until its owner claims it; when a closed polling session gives up. */
  unclaimedSince: number;
  closingUntil = 0;
  /** The socket layer's object for this session. */
  owner: unknown = null;

  constructor(
    readonly id: string,
    readonly engine: Engine,
    now: number,
  ) {
    this.pingAt = now + engine.pingIntervalMs;
    this.unclaimedSince = now;
  }

  get isOpen(): boolean {
    return this.state === OPEN;
  }

  get transport(): 'websocket' | 'polling' {
    return this.ws ? 'websocket' : 'polling';
  }

  /** Sends a message packet (text). */
  send(text: string): void {
    this.sendPacket('4' + text);
  }

  /**
   * Sends a message already framed for WebSocket (a broadcast's one frame), or its text to a polling
   * session.
   */
  sendFramed(text: string, frame: Buffer): void {
    if (this.ws && this.state === OPEN) this.ws.sendFrame(frame);
    else this.sendPacket('4' + text);
  }

  sendPacket(packet: string): void {
    if (this.state !== OPEN) return;
    if (this.ws) {
      this.ws.send(packet);
      return;
    }
    (this.queue ??= []).push(packet);
    if (this.poll) this.flushPoll();
  }

  /** Forgets the WebSocket being probed for an upgrade (it failed, timed out, closed or took over); returns it. */
  endUpgrade(): WsConnection | null {
    const connection = this.upgrading;
    this.upgrading = null;
    this.upgradeProbed = false;
    return connection;
  }

  claim(owner: unknown): void {
    this.owner = owner;
    this.unclaimedSince = 0;
  }

  /** The owner let the session go (its namespace left): unclaimed again, it is closed unless claimed in time. */
  release(now: number): void {
    this.owner = null;
    this.unclaimedSince = now;
  }

  /** Closes the session from the server's side; `closed` is called at once. */
  close(reason = 'forced close'): void {
    this.engine.closeSession(this, reason, true);
  }

  /** Answers the waiting poll with every queued packet (and `extra` after them). */
  flushPoll(extra?: string): void {
    const response = this.poll;
    if (!response) return;
    this.poll = null;
    let body = this.queue ? this.queue.join(SEPARATOR) : '';
    this.queue = null;
    if (extra !== undefined) body = body ? body + SEPARATOR + extra : extra;
    this.engine.respondText(response, body);
  }
}

export class Engine {
  readonly sessions = new Map<string, EngineSession>();
  readonly pingIntervalMs: number;
  readonly pingTimeoutMs: number;
  readonly maxPayload: number;
  private readonly upgradeTimeoutMs: number;
  private readonly claimTimeoutMs: number;
  private readonly generateId: () => string;
  private readonly closePolling: boolean;
  private readonly ws: WsEngine;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly handler: EngineHandler,
    options: EngineOptions = {},
  ) {
    this.pingIntervalMs = options.pingIntervalMs ?? 25_000;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 20_000;
    this.maxPayload = options.maxPayload ?? 1_000_000;
    this.upgradeTimeoutMs = options.upgradeTimeoutMs ?? 10_000;
    this.claimTimeoutMs = options.claimTimeoutMs ?? 45_000;
    this.generateId = options.generateId ?? (() => randomBytes(15).toString('base64url'));
    this.closePolling = options.closePollingConnections ?? false;
    this.ws = new WsEngine({ maxPayload: this.maxPayload });
    // One timer for every session's heartbeat and deadlines, a fraction of the shortest of them apart.
    const every = Math.max(10, Math.min(1_000, Math.floor(Math.min(this.pingIntervalMs, this.pingTimeoutMs) / 4)));
    this.sweeper = setInterval(() => this.sweep(Date.now()), every).unref();
  }

  /** An HTTP request under the engine's path: the handshake, a poll or a POST. */
  handleRequest(request: IncomingMessage, response: ServerResponse): void {
    if (request.method === 'OPTIONS') return this.preflight(request, response);
    if (this.closed) return this.refuse(request, response, EngineError.badRequest);
    const query = queryOf(request.url);
    if (query.get('EIO') === '3') return this.refuse(request, response, EngineError.unsupportedProtocol);
    const transport = query.get('transport');
    if (transport !== 'polling' && transport !== 'websocket') return this.refuse(request, response, EngineError.unknownTransport);
    const sid = query.get('sid');
    if (sid === null) {
      if (request.method !== 'GET') return this.refuse(request, response, EngineError.badHandshakeMethod);
      if (transport === 'websocket') return this.refuse(request, response, EngineError.badRequest);
      return this.handshakePolling(request, response, query);
    }
    const session = this.sessions.get(sid);
    if (!session) return this.refuse(request, response, EngineError.unknownSid);
    if (transport !== 'polling' || session.ws) return this.refuse(request, response, EngineError.badRequest);
    if (request.method === 'GET') return this.onPoll(session, request, response);
    if (request.method === 'POST') return this.onPost(session, request, response);
    this.refuse(request, response, EngineError.badRequest);
  }

  /** An HTTP upgrade under the engine's path: a WebSocket session, or the upgrade of a polling one. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.closed) return abortUpgrade(socket, EngineError.badRequest);
    const query = queryOf(request.url);
    if (query.get('EIO') === '3') return abortUpgrade(socket, EngineError.unsupportedProtocol);
    if (query.get('transport') !== 'websocket') return abortUpgrade(socket, EngineError.unknownTransport);
    const sid = query.get('sid');
    if (sid === null) {
      if (request.method !== 'GET') return abortUpgrade(socket, EngineError.badHandshakeMethod);
      this.ws.handleUpgrade(request, socket, head, (connection) => this.openWebSocket(connection, request, query));
      return;
    }
    const session = this.sessions.get(sid);
    if (!session || session.state !== OPEN) return abortUpgrade(socket, EngineError.unknownSid);
    if (session.ws || session.upgrading) return abortUpgrade(socket, EngineError.badRequest);
    this.ws.handleUpgrade(request, socket, head, (connection) => this.beginUpgrade(session, connection));
  }

  /** Closes every session (the server stops). */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const session of [...this.sessions.values()]) {
      if (session.state === OPEN) this.closeSession(session, 'server shutting down', true);
      if (session.poll) session.flushPoll();
      this.forget(session);
    }
  }

  private newSession(now: number): EngineSession {
    const session = new EngineSession(this.generateId(), this, now);
    this.sessions.set(session.id, session);
    return session;
  }

  private openPacket(session: EngineSession, upgrades: string[]): string {
    return (
      '0' +
      JSON.stringify({ sid: session.id, upgrades, pingInterval: this.pingIntervalMs, pingTimeout: this.pingTimeoutMs, maxPayload: this.maxPayload })
    );
  }

  private handshakePolling(request: IncomingMessage, response: ServerResponse, query: URLSearchParams): void {
    const session = this.newSession(Date.now());
    this.respondText(response, this.openPacket(session, ['websocket']), request);
    this.handler.open(session, request, query);
  }

  private openWebSocket(connection: WsConnection, request: IncomingMessage, query: URLSearchParams): void {
    const session = this.newSession(Date.now());
    session.ws = connection;
    this.listenTo(session, connection);
    connection.send(this.openPacket(session, []));
    this.handler.open(session, request, query);
  }

  /** The session's WebSocket: its listeners are shared by every session (`this` is the connection). */
  private listenTo(session: EngineSession, connection: WsConnection): void {
    connection.removeAllListeners();
    connection.owner = session;
    connection.on('message', onWsMessage);
    connection.on('close', onWsClose);
    connection.on('error', onWsError);
  }

  private beginUpgrade(session: EngineSession, connection: WsConnection): void {
    if (session.state !== OPEN || session.ws || session.upgrading) {
      connection.close();
      return;
    }
    session.upgrading = connection;
    session.upgradeProbed = false;
    session.upgradeDeadline = Date.now() + this.upgradeTimeoutMs;
    connection.on('message', (data: Buffer, binary: boolean) => {
      if (session.upgrading !== connection) return;
      const packet = binary ? '' : data.toString();
      if (packet === '2probe') {
        connection.send('3probe');
        session.upgradeProbed = true;
        // The client pauses polling before it sends "5": its waiting poll returns at once.
        session.flushPoll('6');
      } else if (packet === '5' && session.upgradeProbed && session.state === OPEN) {
        session.endUpgrade();
        session.ws = connection;
        this.listenTo(session, connection);
        session.flushPoll('6');
        const queued = session.queue;
        session.queue = null;
        for (const packetText of queued ?? []) connection.send(packetText);
      } else session.endUpgrade()!.close();
    });
    connection.on('close', () => {
      if (session.upgrading === connection) session.endUpgrade();
    });
  }

  private onPoll(session: EngineSession, request: IncomingMessage, response: ServerResponse): void {
    if (session.poll) {
      this.respondStatus(response, 400, request);
      this.closeSession(session, 'transport error', true);
      return;
    }
    if (session.state === CLOSING) {
      // The client hears the close (after anything queued before it), and the session is gone.
      session.poll = response;
      this.setPollHeaders(response, request);
      session.flushPoll('1');
      this.forget(session);
      return;
    }
    session.poll = response;
    this.setPollHeaders(response, request);
    response.once('close', () => {
      // The client went away while its poll waited.
      if (session.poll === response) {
        session.poll = null;
        this.closeSession(session, 'transport close', false);
      }
    });
    if (session.queue || session.upgradeProbed) session.flushPoll(session.upgradeProbed ? '6' : undefined);
  }

  private onPost(session: EngineSession, request: IncomingMessage, response: ServerResponse): void {
    if (session.posting) {
      this.respondStatus(response, 400, request);
      this.closeSession(session, 'transport error', true);
      return;
    }
    if (request.headers['content-type'] === 'application/octet-stream') {
      this.respondStatus(response, 400, request);
      this.closeSession(session, 'transport error', true);
      return;
    }
    session.posting = true;
    const chunks: Buffer[] = [];
    let length = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      length += chunk.length;
      if (length > this.maxPayload) {
        tooLarge = true;
        session.posting = false;
        this.respondStatus(response, 413, request, { Connection: 'close' });
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (tooLarge) return;
      session.posting = false;
      const body = Buffer.concat(chunks, length).toString();
      this.respondStatus(response, 200, request, { 'Content-Type': 'text/html', 'Content-Length': '2' }, 'ok');
      for (const packet of body.split(SEPARATOR)) {
        if (session.state !== OPEN) break;
        this.onPacket(session, packet);
      }
    });
    request.on('error', () => {
      session.posting = false;
    });
  }

  onPacket(session: EngineSession, packet: string): void {
    if (session.state !== OPEN) return;
    switch (packet.charCodeAt(0)) {
      case 0x34: // 4 message
        this.handler.message(session, packet.slice(1));
        return;
      case 0x33: // 3 pong
        session.pongBy = 0;
        session.pingAt = Date.now() + this.pingIntervalMs;
        return;
      case 0x36: // 6 noop
        return;
      case 0x31: // 1 close
        this.closeSession(session, 'transport close', true);
        return;
      default: // a ping (the server pings in protocol 4), an upgrade out of place, binary or garbage
        this.closeSession(session, 'parse error', true);
    }
  }

  /**
   * Ends a session for the socket layer at once. `tellClient`: a WebSocket is closed with a close
   * frame, a polling client hears "1" on its waiting or next poll.
   */
  closeSession(session: EngineSession, reason: string, tellClient: boolean): void {
    if (session.state !== OPEN) return;
    session.endUpgrade()?.close();
    if (session.ws) {
      session.state = CLOSED;
      this.sessions.delete(session.id);
      if (tellClient) session.ws.close();
      else session.ws.terminate();
    } else if (tellClient && !session.poll) {
      session.state = CLOSING;
      session.closingUntil = Date.now() + CLOSE_POLL_TIMEOUT_MS;
    } else {
      session.state = CLOSED;
      if (session.poll) session.flushPoll('1');
      this.sessions.delete(session.id);
    }
    this.handler.closed(session, reason);
    session.owner = null;
  }

  private forget(session: EngineSession): void {
    session.state = CLOSED;
    session.queue = null;
    this.sessions.delete(session.id);
  }

  private sweep(now: number): void {
    for (const session of this.sessions.values()) {
      if (session.state === CLOSING) {
        if (now >= session.closingUntil) this.forget(session);
        continue;
      }
      if (session.pongBy !== 0) {
        if (now >= session.pongBy) this.closeSession(session, 'ping timeout', true);
      } else if (now >= session.pingAt) {
        session.pongBy = now + this.pingTimeoutMs;
        session.sendPacket('2');
      }
      if (session.state !== OPEN) continue;
      if (session.unclaimedSince !== 0 && now - session.unclaimedSince >= this.claimTimeoutMs) this.closeSession(session, 'not claimed', true);
      else if (session.upgrading && now >= session.upgradeDeadline) session.endUpgrade()!.close();
    }
  }

  private setPollHeaders(response: ServerResponse, request: IncomingMessage): void {
    for (const [name, value] of Object.entries(this.baseHeaders(request))) response.setHeader(name, value);
  }

  /** CORS for any origin with credentials (the token is what counts), no caching, and the group's closing. */
  private baseHeaders(request: IncomingMessage): Record<string, string> {
    const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
    const origin = request.headers.origin;
    if (origin) {
      headers['Access-Control-Allow-Origin'] = origin;
      headers['Access-Control-Allow-Credentials'] = 'true';
      headers.Vary = 'Origin';
    }
    if (this.closePolling) headers.Connection = 'close';
    return headers;
  }

  /** A 200 of packets (the open packet, or a poll's answer); headers already set for a poll. */
  respondText(response: ServerResponse, body: string, request?: IncomingMessage): void {
    const headers: Record<string, string> = request ? this.baseHeaders(request) : {};
    headers['Content-Type'] = 'text/plain; charset=UTF-8';
    headers['Content-Length'] = String(Buffer.byteLength(body));
    response.writeHead(200, headers);
    response.end(body);
  }

  private respondStatus(response: ServerResponse, status: number, request: IncomingMessage, extra: Record<string, string> = {}, body?: string): void {
    if (response.headersSent) return;
    response.writeHead(status, { ...this.baseHeaders(request), ...extra });
    response.end(body);
  }

  private refuse(request: IncomingMessage, response: ServerResponse, error: ErrorKind): void {
    const body = JSON.stringify(error);
    response.writeHead(400, { ...this.baseHeaders(request), 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
    response.end(body);
  }

  private preflight(request: IncomingMessage, response: ServerResponse): void {
    const headers = this.baseHeaders(request);
    headers['Access-Control-Allow-Methods'] = 'GET,HEAD,PUT,PATCH,POST,DELETE';
    const asked = request.headers['access-control-request-headers'];
    if (asked) {
      headers['Access-Control-Allow-Headers'] = asked;
      headers.Vary = headers.Vary ? `${headers.Vary}, Access-Control-Request-Headers` : 'Access-Control-Request-Headers';
    }
    headers['Content-Length'] = '0';
    response.writeHead(204, headers);
    response.end();
  }
}

// A session's WebSocket listeners, one function each for every session.
function onWsMessage(this: WsConnection, data: Buffer, binary: boolean): void {
  const session = this.owner as EngineSession;
  if (binary) session.engine.closeSession(session, 'parse error', true);
  else session.engine.onPacket(session, data.toString());
}
function onWsClose(this: WsConnection): void {
  const session = this.owner as EngineSession;
  if (session.ws === this) session.engine.closeSession(session, 'transport close', false);
}
function onWsError(this: WsConnection): void {
  const session = this.owner as EngineSession;
  if (session.ws === this) session.engine.closeSession(session, 'transport error', false);
}

function queryOf(url: string | undefined): URLSearchParams {
  const at = url?.indexOf('?') ?? -1;
  return new URLSearchParams(at === -1 ? '' : url!.slice(at + 1));
}

function abortUpgrade(socket: Duplex, error: ErrorKind): void {
  socket.on('error', () => {});
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(error.message)}\r\n\r\n${error.message}`,
    );
  }
  socket.destroy();
}
