// A small WebSocket server (RFC 6455) under the Socket.IO engine (engine-io.ts): `handleUpgrade(request,
// socket, head, done)` answers the upgrade, and the engine speaks to the connection through `send`,
// `sendFrame`, `close`, `terminate` and `on('message' | 'close' | 'error')`.
//
// Why not `ws`: an idle `ws` connection keeps about 3 KB of its own beside the TCP socket (the
// WebSocket with its bound listeners, a Receiver that is a Writable stream, a Sender), the largest
// part of an idle socket then (docs/decisions.md, "Idle sockets"). Here a connection is one
// small object kept on the `net.Socket`: frames are parsed in the socket's 'data' listener, which is
// one function shared by every connection (it finds its connection on the socket), and written with
// one `socket.write` each. No compression, no extensions, no subprotocol choice beyond the first
// offered; the server never fragments.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isUtf8 } from 'node:buffer';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const KEY_PATTERN = /^[+/0-9A-Za-z]{22}==$/;
/** How long a connection that sent its close frame waits for the peer's before the TCP socket is destroyed. */
const CLOSE_TIMEOUT_MS = 30_000;

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

const enum Opcode {
  Continuation = 0x0,
  Text = 0x1,
  Binary = 0x2,
  Close = 0x8,
  Ping = 0x9,
  Pong = 0xa,
}

/** Close codes this engine sends (RFC 6455, 7.4.1). */
export const CloseCode = {
  normal: 1000,
  protocolError: 1002,
  invalidPayload: 1007,
  tooLarge: 1009,
  /** Received only: no code in the close frame. */
  noStatus: 1005,
  /** Received only: the TCP connection ended without a close frame. */
  abnormal: 1006,
} as const;

type Listener = (...args: any[]) => void;
type WriteCallback = (error?: Error | null) => void;
type Listeners = Listener | Listener[] | undefined;

const kConnection = Symbol('ws-engine connection');
type EngineSocket = Socket & { [kConnection]?: WsConnection };

export interface WsEngineOptions {
  /** The largest message accepted, in bytes (the engine's `maxPayload`); larger closes with 1009. */
  maxPayload?: number;
}

/**
 * One WebSocket connection. Its listeners are kept in three fields (the engine listens to three
 * events) instead of an EventEmitter's table; its parse state is a few fields.
 */
export class WsConnection {
  static readonly CONNECTING = CONNECTING;
  static readonly OPEN = OPEN;
  static readonly CLOSING = CLOSING;
  static readonly CLOSED = CLOSED;

  readyState: number = OPEN;
  _socket: Socket;
  protocol: string;
  /** Whatever the engine above keeps for this connection (engine-io.ts: its session). */
  owner: unknown = null;
  private readonly maxPayload: number;
  private messageListeners: Listeners = undefined;
  private closeListeners: Listeners = undefined;
  private errorListeners: Listeners = undefined;
  /** Bytes received and not yet parsed: a chunk, or chunks not yet joined. */
  private pending: Buffer | Buffer[] | null = null;
  private pendingBytes = 0;
  /** How many bytes the frame being received needs before it can be parsed. */
  private needed = 2;
  /** The parts of a fragmented message received so far, and its opcode and length. */
  private fragments: Buffer[] | null = null;
  private fragmentsOpcode = 0;
  private fragmentsBytes = 0;
  private closeFrameSent = false;
  private closeFrameReceived = false;
  private closeCode: number = CloseCode.abnormal;
  private closeReason = '';
  private closeTimer: NodeJS.Timeout | null = null;

  constructor(socket: Socket, protocol: string, maxPayload: number) {
    this._socket = socket;
    this.protocol = protocol;
    this.maxPayload = maxPayload;
  }

  on(event: string, listener: Listener): this {
    if (event === 'message') this.messageListeners = add(this.messageListeners, listener);
    else if (event === 'close') this.closeListeners = add(this.closeListeners, listener);
    else if (event === 'error') this.errorListeners = add(this.errorListeners, listener);
    return this;
  }

  addListener(event: string, listener: Listener): this {
    return this.on(event, listener);
  }

  /** 'close' is emitted once anyway; for the others the listener is removed before it runs. */
  once(event: string, listener: Listener): this {
    if (event === 'close') return this.on(event, listener);
    const wrapped = (...args: unknown[]) => {
      this.off(event, wrapped);
      listener(...args);
    };
    (wrapped as { listener?: Listener }).listener = listener;
    return this.on(event, wrapped);
  }

  off(event: string, listener: Listener): this {
    if (event === 'message') this.messageListeners = remove(this.messageListeners, listener);
    else if (event === 'close') this.closeListeners = remove(this.closeListeners, listener);
    else if (event === 'error') this.errorListeners = remove(this.errorListeners, listener);
    return this;
  }

  removeListener(event: string, listener: Listener): this {
    return this.off(event, listener);
  }

  removeAllListeners(event?: string): this {
    if (event === undefined || event === 'message') this.messageListeners = undefined;
    if (event === undefined || event === 'close') this.closeListeners = undefined;
    if (event === undefined || event === 'error') this.errorListeners = undefined;
    return this;
  }

  listenerCount(event: string): number {
    const listeners = event === 'message' ? this.messageListeners : event === 'close' ? this.closeListeners : event === 'error' ? this.errorListeners : undefined;
    return listeners === undefined ? 0 : Array.isArray(listeners) ? listeners.length : 1;
  }

  /**
   * Sends one message: a string as a text frame, anything else as a binary one. `callback` runs once
   * the frame is written to the socket, or with an error if the connection is no longer open.
   */
  send(data: string | Buffer | ArrayBuffer | ArrayBufferView, options?: unknown, callback?: WriteCallback): void {
    if (typeof options === 'function') callback = options as WriteCallback;
    if (this.readyState !== OPEN) {
      if (callback) process.nextTick(callback, new Error(`WebSocket is not open: readyState ${this.readyState}`));
      return;
    }
    if (typeof data === 'string') {
      this.writeText(data, callback);
      return;
    }
    const payload = Buffer.isBuffer(data)
      ? data
      : ArrayBuffer.isView(data)
        ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
        : Buffer.from(data);
    this.writeFrame(Opcode.Binary, payload, callback);
  }

  /** A frame already encoded (`textFrame`): one frame written to every socket of a broadcast. */
  sendFrame(frame: Buffer): void {
    if (this.readyState === OPEN) this._socket.write(frame);
  }

  ping(data: Buffer = Buffer.alloc(0)): void {
    if (this.readyState === OPEN) this.writeFrame(Opcode.Ping, data);
  }

  /**
   * Starts the closing handshake: a close frame (with `code` if given), then the TCP socket is ended
   * when the peer's close frame arrives, or destroyed if it does not within 30 s.
   */
  close(code?: number, reason?: string): void {
    if (this.readyState === CLOSED) return;
    if (this.readyState === CLOSING) {
      if (this.closeFrameSent && this.closeFrameReceived) this._socket.end();
      return;
    }
    this.readyState = CLOSING;
    this.sendClose(code, reason);
    if (this.closeFrameReceived) this._socket.end();
    else this.closeTimer = setTimeout(destroyConnection, CLOSE_TIMEOUT_MS, this);
  }

  /** Ends the connection at once, without the closing handshake. */
  terminate(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSING;
    this._socket.destroy();
  }

  private sendClose(code?: number, reason?: string): void {
    if (this.closeFrameSent) return;
    this.closeFrameSent = true;
    let payload: Buffer;
    if (code === undefined || code === CloseCode.noStatus) payload = Buffer.alloc(0);
    else {
      const text = reason ?? '';
      payload = Buffer.allocUnsafe(2 + Buffer.byteLength(text));
      payload.writeUInt16BE(code, 0);
      payload.write(text, 2);
    }
    if (this._socket.writable) this.writeFrame(Opcode.Close, payload);
  }

  private writeText(text: string, callback?: WriteCallback): void {
    this._socket.write(textFrame(text), callback);
  }

  private writeFrame(opcode: Opcode, payload: Buffer, callback?: WriteCallback): void {
    const length = payload.length;
    const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
    const socket = this._socket;
    if (length <= 4096) {
      const frame = Buffer.allocUnsafe(headerLength + length);
      writeHeader(frame, opcode, length);
      payload.copy(frame, headerLength);
      socket.write(frame, callback);
      return;
    }
    const header = Buffer.allocUnsafe(headerLength);
    writeHeader(header, opcode, length);
    socket.cork();
    socket.write(header);
    socket.write(payload, callback);
    socket.uncork();
  }

  private emit(listeners: Listeners, a?: unknown, b?: unknown): void {
    if (listeners === undefined) return;
    if (typeof listeners === 'function') listeners.call(this, a, b);
    else for (const listener of listeners.slice()) listener.call(this, a, b);
  }

  /** Bytes from the TCP socket. */
  receive(chunk: Buffer): void {
    if (this.readyState !== OPEN && this.closeFrameReceived) return;
    if (this.pending === null) {
      if (chunk.length < this.needed) {
        this.pending = chunk;
        this.pendingBytes = chunk.length;
        return;
      }
      this.parse(chunk);
      return;
    }
    if (Array.isArray(this.pending)) this.pending.push(chunk);
    else this.pending = [this.pending, chunk];
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < this.needed) return;
    const joined = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = null;
    this.pendingBytes = 0;
    this.parse(joined);
  }

  /** Parses every whole frame in `data`; what is left of a partial frame is kept for the next chunk. */
  private parse(data: Buffer): void {
    let offset = 0;
    const end = data.length;
    while (offset < end) {
      if (end - offset < 2) return this.keep(data, offset, 2);
      const first = data[offset]!;
      const second = data[offset + 1]!;
      const fin = (first & 0x80) !== 0;
      const opcode = first & 0x0f;
      if ((first & 0x70) !== 0) return this.fail(CloseCode.protocolError, 'RSV bits set without an extension');
      if ((second & 0x80) === 0) return this.fail(CloseCode.protocolError, 'a client frame must be masked');
      let length = second & 0x7f;
      let headerLength = 6;
      if (length === 126) {
        headerLength = 8;
        if (end - offset < 4) return this.keep(data, offset, 4);
        length = data.readUInt16BE(offset + 2);
      } else if (length === 127) {
        headerLength = 14;
        if (end - offset < 10) return this.keep(data, offset, 10);
        const high = data.readUInt32BE(offset + 2);
        // Anything of 4 GB or more is far over any limit this engine is given.
        if (high !== 0) return this.fail(CloseCode.tooLarge, 'message too large');
        length = data.readUInt32BE(offset + 6);
      }
      if (opcode >= 0x8) {
        if (opcode > Opcode.Pong) return this.fail(CloseCode.protocolError, `unknown opcode ${opcode}`);
        if (!fin) return this.fail(CloseCode.protocolError, 'a control frame must not be fragmented');
        if (length > 125) return this.fail(CloseCode.protocolError, 'a control frame must carry 125 bytes or fewer');
      } else {
        if (opcode > Opcode.Binary) return this.fail(CloseCode.protocolError, `unknown opcode ${opcode}`);
        if (opcode === Opcode.Continuation && this.fragments === null) return this.fail(CloseCode.protocolError, 'a continuation frame with no message to continue');
        if (opcode !== Opcode.Continuation && this.fragments !== null) return this.fail(CloseCode.protocolError, 'a new message before the last one ended');
        if (this.fragmentsBytes + length > this.maxPayload) return this.fail(CloseCode.tooLarge, 'message too large');
      }
      if (end - offset < headerLength + length) return this.keep(data, offset, headerLength + length);
      const maskAt = offset + headerLength - 4;
      const payload = data.subarray(offset + headerLength, offset + headerLength + length);
      unmask(payload, data, maskAt);
      offset += headerLength + length;
      if (opcode >= 0x8) this.control(opcode, payload);
      else this.dataFrame(opcode, fin, payload);
      // After the peer's close frame (or a protocol error) nothing more is read.
      if (this.closeFrameReceived) return;
    }
  }

  private keep(data: Buffer, offset: number, needed: number): void {
    this.pending = offset === 0 ? data : data.subarray(offset);
    this.pendingBytes = this.pending.length;
    this.needed = needed;
  }

  private dataFrame(opcode: number, fin: boolean, payload: Buffer): void {
    this.needed = 2;
    if (opcode !== Opcode.Continuation) {
      if (fin) return this.message(opcode, payload);
      this.fragments = [payload];
      this.fragmentsOpcode = opcode;
      this.fragmentsBytes = payload.length;
      return;
    }
    this.fragments!.push(payload);
    this.fragmentsBytes += payload.length;
    if (!fin) return;
    const message = Buffer.concat(this.fragments!, this.fragmentsBytes);
    const messageOpcode = this.fragmentsOpcode;
    this.fragments = null;
    this.fragmentsOpcode = 0;
    this.fragmentsBytes = 0;
    this.message(messageOpcode, message);
  }

  private message(opcode: number, payload: Buffer): void {
    if (opcode === Opcode.Text && !isUtf8(payload)) return this.fail(CloseCode.invalidPayload, 'a text message that is not UTF-8');
    this.emit(this.messageListeners, payload, opcode === Opcode.Binary);
  }

  private control(opcode: number, payload: Buffer): void {
    this.needed = 2;
    if (opcode === Opcode.Ping) {
      if (this.readyState === OPEN) this.writeFrame(Opcode.Pong, payload);
      return;
    }
    if (opcode === Opcode.Pong) return;
    // A close frame: its code (if any) must be one a peer may send, its reason UTF-8.
    if (payload.length === 1) return this.fail(CloseCode.protocolError, 'a close frame of one byte');
    let code: number = CloseCode.noStatus;
    let reason = '';
    if (payload.length >= 2) {
      code = payload.readUInt16BE(0);
      if (!isValidCloseCode(code)) return this.fail(CloseCode.protocolError, `invalid close code ${code}`);
      const reasonBytes = payload.subarray(2);
      if (!isUtf8(reasonBytes)) return this.fail(CloseCode.invalidPayload, 'a close reason that is not UTF-8');
      reason = reasonBytes.toString();
    }
    this.closeFrameReceived = true;
    this.closeCode = code;
    this.closeReason = reason;
    this.pending = null;
    this.fragments = null;
    if (this.readyState === OPEN) this.readyState = CLOSING;
    this.sendClose(code === CloseCode.noStatus ? undefined : code);
    this._socket.end();
  }

  /** A protocol error: the peer is told why (`code`), the socket ends, and 'error' is emitted. */
  private fail(code: number, message: string): void {
    this.pending = null;
    this.fragments = null;
    this.closeFrameReceived = true; // nothing more is read
    const wasOpen = this.readyState === OPEN;
    this.readyState = CLOSING;
    this.closeCode = code;
    this.sendClose(code);
    this._socket.end();
    if (this.closeTimer === null) this.closeTimer = setTimeout(destroyConnection, CLOSE_TIMEOUT_MS, this);
    if (wasOpen && this.errorListeners !== undefined) {
      const error = new Error(message) as Error & { closeCode?: number };
      error.closeCode = code;
      this.emit(this.errorListeners, error);
    }
  }

  /** The TCP socket closed. */
  closed(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    if (this.closeTimer !== null) {
      clearTimeout(this.closeTimer);
      this.closeTimer = null;
    }
    this.pending = null;
    this.fragments = null;
    const listeners = this.closeListeners;
    this.closeListeners = undefined;
    this.emit(listeners, this.closeCode, Buffer.from(this.closeReason));
  }

  /** The TCP peer ended its side without a close frame (or after it). */
  ended(): void {
    if (this.readyState === OPEN) this.readyState = CLOSING;
    this._socket.end();
  }
}

function destroyConnection(connection: WsConnection): void {
  connection._socket.destroy();
}

// The TCP socket's listeners: one function each for every connection, `this` being the socket.
function onSocketData(this: EngineSocket, chunk: Buffer): void {
  this[kConnection]?.receive(chunk);
}
function onSocketEnd(this: EngineSocket): void {
  this[kConnection]?.ended();
}
function onSocketClose(this: EngineSocket): void {
  this[kConnection]?.closed();
}
function onSocketError(this: EngineSocket): void {
  // The 'close' that follows tells the connection; an error after the handshake is not the peer's fault to report.
  this.destroy();
}

function add(listeners: Listeners, listener: Listener): Listeners {
  if (listeners === undefined) return listener;
  if (typeof listeners === 'function') return [listeners, listener];
  listeners.push(listener);
  return listeners;
}

function remove(listeners: Listeners, listener: Listener): Listeners {
  if (listeners === undefined) return undefined;
  const matches = (candidate: Listener) => candidate === listener || (candidate as { listener?: Listener }).listener === listener;
  if (typeof listeners === 'function') return matches(listeners) ? undefined : listeners;
  const index = listeners.findIndex(matches);
  if (index === -1) return listeners;
  const rest = listeners.filter((_, i) => i !== index);
  return rest.length === 0 ? undefined : rest.length === 1 ? rest[0] : rest;
}

/** An unmasked, unfragmented text frame of `text`: what the server sends. */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  writeHeader(frame, Opcode.Text, length);
  frame.write(text, headerLength);
  return frame;
}

function writeHeader(frame: Buffer, opcode: number, length: number): void {
  frame[0] = 0x80 | opcode;
  if (length < 126) frame[1] = length;
  else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(length, 6);
  }
}

function unmask(payload: Buffer, data: Buffer, maskAt: number): void {
  const m0 = data[maskAt]!;
  const m1 = data[maskAt + 1]!;
  const m2 = data[maskAt + 2]!;
  const m3 = data[maskAt + 3]!;
  const length = payload.length;
  let i = 0;
  for (; i + 3 < length; i += 4) {
    payload[i] ^= m0;
    payload[i + 1] ^= m1;
    payload[i + 2] ^= m2;
    payload[i + 3] ^= m3;
  }
  for (; i < length; i++) payload[i] ^= data[maskAt + (i & 3)]!;
}

/** The codes a peer may put in a close frame (RFC 6455, 7.4; 1004-1006 and 1015 are never sent). */
function isValidCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

function refuse(socket: Duplex, status: number, message: string, extra = ''): void {
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${status === 426 ? 'Upgrade Required' : 'Bad Request'}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\n${extra}\r\n${message}`,
    );
  }
  socket.destroy();
}

/** Answers WebSocket upgrades: a connection is made for each valid one and handed to `done`. */
export class WsEngine {
  private readonly maxPayload: number;

  constructor(options: WsEngineOptions = {}) {
    this.maxPayload = options.maxPayload ?? 100 * 1024 * 1024;
  }

  handleUpgrade(request: IncomingMessage, duplex: Duplex, head: Buffer, done: (connection: WsConnection, request: IncomingMessage) => void): void {
    const socket = duplex as EngineSocket;
    socket.on('error', onSocketError);
    const key = request.headers['sec-websocket-key'];
    const version = request.headers['sec-websocket-version'];
    if (request.method !== 'GET') return refuse(socket, 400, 'Invalid HTTP method');
    if (request.headers.upgrade?.toLowerCase() !== 'websocket') return refuse(socket, 400, 'Invalid Upgrade header');
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) return refuse(socket, 400, 'Missing or invalid Sec-WebSocket-Key header');
    if (version !== '13' && version !== '8') return refuse(socket, 426, 'Missing or invalid Sec-WebSocket-Version header', 'Sec-WebSocket-Version: 13, 8\r\n');
    if (!socket.readable || !socket.writable) {
      socket.destroy();
      return;
    }
    const offered = request.headers['sec-websocket-protocol'];
    const protocol = typeof offered === 'string' ? (offered.split(',')[0]?.trim() ?? '') : '';
    const accept = createHash('sha1').update(key + GUID).digest('base64');
    const headers = ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${accept}`];
    if (protocol) headers.push(`Sec-WebSocket-Protocol: ${protocol}`);
    socket.write(headers.concat('\r\n').join('\r\n'));

    const connection = new WsConnection(socket, protocol, this.maxPayload);
    socket[kConnection] = connection;
    socket.setTimeout(0);
    socket.setNoDelay(true);
    socket.on('data', onSocketData);
    socket.on('end', onSocketEnd);
    socket.on('close', onSocketClose);
    done(connection, request);
    if (head.length > 0) connection.receive(head);
    socket.resume();
  }
}
