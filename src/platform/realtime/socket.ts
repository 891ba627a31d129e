// The Socket.IO server (path /socket.io) on the app's own HTTP server: our own engine and socket layer
// (engine-io.ts, socket-io.ts), spoken to by socket.io-client as to Socket.IO's server. Each process
// serves the sockets it holds; what must reach a person's sockets on every process goes through the
// event bus (person-tabs.ts). No business rules here: events and their meaning live in
// modules/conversations/socket-events.ts.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { groupSessionIds, processGroupSlot } from '../http/process-group.js';
import { SOCKET_PATH } from './socket-path.js';
import { SocketServer, type SocketServerOptions } from './socket-io.js';

export { SOCKET_PATH };

/** An upgrade of another path that has written nothing within this time is ended (no one took it). */
const UNCLAIMED_UPGRADE_MS = 10_000;

export interface RealtimeServer<Data> {
  sockets: SocketServer<Data>;
  /** Disconnects this process's sockets (so the HTTP server can close) and stops listening for them. */
  close(): void;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Serves /socket.io/ on `httpServer`: its requests before the server's own listeners (Fastify's), its
 * upgrades beside the others' (the voice relay's). In a process group, session ids name this process and
 * each long-polling response closes its connection, so the primary routes the next request again.
 */
export function createSocketServer<Data>(httpServer: HttpServer, options: Omit<SocketServerOptions<Data>, 'generateId' | 'closePollingConnections'>): RealtimeServer<Data> {
  const slot = processGroupSlot();
  const sockets = new SocketServer<Data>({
    ...options,
    ...(slot === undefined ? {} : { generateId: groupSessionIds(slot), closePollingConnections: true }),
  });
  const prefix = `${SOCKET_PATH}/`;
  const ours = (request: IncomingMessage) => request.url?.startsWith(prefix) === true;

  const others = httpServer.listeners('request') as RequestListener[];
  httpServer.removeAllListeners('request');
  const onRequest: RequestListener = (request, response) => {
    if (ours(request)) sockets.engine.handleRequest(request, response);
    else for (const listener of others) listener.call(httpServer, request, response);
  };
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (ours(request)) return sockets.engine.handleUpgrade(request, socket, head);
    socket.on('error', () => {});
    setTimeout(() => {
      if (socket.writable && (socket as Duplex & { bytesWritten?: number }).bytesWritten === 0) socket.end();
    }, UNCLAIMED_UPGRADE_MS).unref();
  };
  httpServer.on('request', onRequest);
  httpServer.on('upgrade', onUpgrade);

  let closed = false;
  return {
    sockets,
    close() {
      if (closed) return;
      closed = true;
      sockets.close();
      httpServer.off('upgrade', onUpgrade);
    },
  };
}
