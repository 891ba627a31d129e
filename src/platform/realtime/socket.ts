// The Socket.IO server (path /socket.io) on the app's own HTTP server. With REDIS_URL it uses the
// Redis adapter, so an emit or a fetchSockets on one process reaches sockets held by any other.
// No business rules here: events and their meaning live in modules/conversations/socket-events.ts.
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import { Server } from 'socket.io';
import { joinEngineToGroup, processGroupSlot } from '../http/process-group.js';
import { SOCKET_PATH } from './socket-path.js';
import { WsEngine } from './ws-engine.js';

export { SOCKET_PATH };

export interface SocketServerOptions {
  /** The platform's Redis connection (the bus's): the adapter publishes on it and subscribes on a duplicate. */
  redis?: Redis;
  /** How long a cross-process request (fetchSockets) waits for the other processes. */
  requestsTimeoutMs?: number;
  onError?: (error: unknown) => void;
}

export interface SocketServer {
  io: Server;
  readonly kind: 'memory' | 'redis';
  /** Disconnects this process's sockets (so the HTTP server can close) and ends the adapter's connections. */
  close(): Promise<void>;
}

/** Engine.IO's WebSocket upgrade, as its attach() calls it. */
type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * Engine.IO keeps each connection's HTTP request for the socket's life (`socket.conn.request`, and on a
 * WebSocket upgrade through its stand-in response's `close` listener on the TCP socket): about 1.4 KB
 * a socket. Socket.IO copies what it needs from it (the handshake's headers and query, which the token
 * check reads) when the client joins the namespace, and the stand-in response's `close` is only for
 * HTTP middlewares that wait for it (there are none). So both are let go: the listener right after the
 * upgrade starts (Engine.IO adds it at once, as a `once` listener; ws's own come later and are not),
 * the request, and the handshake's headers and query, once the socket is connected (after the
 * middlewares). Nothing after the connection reads them. docs/decisions.md, "Idle sockets".
 */
function releaseRequests(io: Server): void {
  const engine = io.engine as unknown as { handleUpgrade: UpgradeHandler };
  const handleUpgrade = engine.handleUpgrade.bind(engine);
  engine.handleUpgrade = (request, socket, head) => {
    const before = new Set(socket.rawListeners('close'));
    handleUpgrade(request, socket, head);
    for (const listener of socket.rawListeners('close') as Array<(...args: unknown[]) => void>) {
      if (!before.has(listener) && 'listener' in listener) socket.removeListener('close', listener);
    }
  };
  io.on('connection', (socket) => {
    (socket.conn as { request: IncomingMessage | null }).request = null;
    // Read by the connection middlewares only (the token): a browser's headers are a kilobyte or more.
    // One frozen empty object for every socket, not two new ones each.
    socket.handshake.headers = NOTHING as typeof socket.handshake.headers;
    socket.handshake.query = NOTHING as typeof socket.handshake.query;
    const withAcks = socket as unknown as { acks: { size: number } };
    if (withAcks.acks.size === 0) withAcks.acks = new LazyAcks();
    compactListeners(socket);
    compactListeners(socket.conn);
    compactTransport(socket.conn.transport);
    if (socket.conn.transport.name !== 'websocket') socket.conn.once('upgrade', compactTransport);
  });
}

const NOTHING = Object.freeze({});

/**
 * Socket.IO's table of acknowledgements the server awaits from this socket (`emit` with a callback,
 * `emitWithAck`), as the three calls it makes (set, get, delete) on a Map made only when one is
 * awaited: an empty Map is about 200 bytes, and an idle socket of the service awaits none.
 */
class LazyAcks {
  private map: Map<number, unknown> | undefined = undefined;
  get(id: number): unknown {
    return this.map?.get(id);
  }
  has(id: number): boolean {
    return this.map?.has(id) ?? false;
  }
  set(id: number, ack: unknown): this {
    (this.map ??= new Map()).set(id, ack);
    return this;
  }
  delete(id: number): boolean {
    const deleted = this.map?.delete(id) ?? false;
    if (this.map?.size === 0) this.map = undefined;
    return deleted;
  }
  clear(): void {
    this.map = undefined;
  }
  get size(): number {
    return this.map?.size ?? 0;
  }
}

type Emitter = { _events?: Record<string | symbol, unknown> };

/**
 * An EventEmitter keeps its listeners in a null-prototype object made as a dictionary (a hash table of
 * about 270 bytes, however few its keys). Each idle socket has four such emitters (its TCP socket,
 * Engine.IO's socket and transport, Socket.IO's socket); the same listeners copied into an object in
 * fast mode (null prototype, named properties) take 50 to 100 bytes. EventEmitter asks nothing more of
 * the table than lookups by name, and a table that later loses a key simply turns dictionary again
 * (modules/conversations/socket-events.ts compacts a socket's again once its REGISTER is done).
 */
export function compactListeners(emitter: unknown): void {
  const events = (emitter as Emitter | undefined)?._events;
  if (!events) return;
  const compact: Record<string | symbol, unknown> = {};
  for (const name of Reflect.ownKeys(events)) compact[name] = events[name];
  Object.setPrototypeOf(compact, null);
  (emitter as Emitter)._events = compact;
}

function compactTransport(transport: unknown): void {
  compactListeners(transport);
  compactListeners((transport as { socket?: { _socket?: unknown } }).socket?._socket);
}

export async function createSocketServer(httpServer: HttpServer, options: SocketServerOptions = {}): Promise<SocketServer> {
  const io = new Server(httpServer, {
    path: SOCKET_PATH,
    // Same policy as the HTTP CORS plugin: any origin, with credentials; the token is what counts.
    cors: { origin: true, credentials: true },
    serveClient: false,
    // Engine.IO ends an upgrade of another path that wrote nothing within this time: the voice relay
    // (modules/realtime-voice) checks its token in the database first, which under load can take a second.
    destroyUpgradeTimeout: 10_000,
    // Said outright: compression would keep a zlib context per socket (and our engine has none).
    perMessageDeflate: false,
    // Our own WebSocket server instead of ws: an idle connection keeps one small object on its TCP
    // socket (ws-engine.ts; docs/decisions.md, "Idle sockets").
    wsEngine: WsEngine,
  });
  releaseRequests(io);
  // One of several API processes on a port: the session ids name this process, so its sessions stay here.
  const slot = processGroupSlot();
  if (slot !== undefined) joinEngineToGroup(io.engine, slot);
  let subscriber: Redis | undefined;
  if (options.redis) {
    const onError = options.onError ?? ((error: unknown) => console.error('[socket.io redis]', error));
    // A connection in subscriber mode runs no other command: the adapter hears on its own duplicate.
    subscriber = options.redis.duplicate({ lazyConnect: true });
    subscriber.on('error', onError);
    await subscriber.connect();
    io.adapter(createAdapter(options.redis, subscriber, { requestsTimeout: options.requestsTimeoutMs ?? 2_000 }));
  }
  let closed = false;
  return {
    io,
    kind: options.redis ? 'redis' : 'memory',
    async close() {
      if (closed) return;
      closed = true;
      io.local.disconnectSockets(true);
      // io.close() would also close the HTTP server, which Fastify owns: close the engine only.
      io.engine.close();
      if (subscriber) {
        try {
          await subscriber.quit();
        } catch {
          subscriber.disconnect();
        }
      }
    },
  };
}
