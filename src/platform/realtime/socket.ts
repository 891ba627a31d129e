// The Socket.IO server (path /socket.io) on the app's own HTTP server. With REDIS_URL it uses the
// Redis adapter, so an emit or a fetchSockets on one process reaches sockets held by any other.
// No business rules here: events and their meaning live in modules/conversations/socket-events.ts.
import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import { Server } from 'socket.io';
import { joinEngineToGroup, processGroupSlot } from '../http/process-group.js';
import { SOCKET_PATH } from './socket-path.js';

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

export async function createSocketServer(httpServer: HttpServer, options: SocketServerOptions = {}): Promise<SocketServer> {
  const io = new Server(httpServer, {
    path: SOCKET_PATH,
    // Same policy as the HTTP CORS plugin: any origin, with credentials; the token is what counts.
    cors: { origin: true, credentials: true },
    serveClient: false,
    // Engine.IO ends an upgrade of another path that wrote nothing within this time: the voice relay
    // (modules/realtime-voice) checks its token in the database first, which under load can take a second.
    destroyUpgradeTimeout: 10_000,
  });
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
