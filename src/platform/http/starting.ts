// The port listens from the first moments of a start: while the database opens, migrations run and the
// app is built, every request is answered 503 (`GET /api/test` with `status: "starting"`, in the health
// body's shape; any other route in the failure shape, code STARTING), with `Retry-After: 1`, instead of
// connections being refused. Once the app is ready the same server hands every request to it.
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import { coalesceServerWrites } from './coalesced-writes.js';

export interface StartingInfo {
  version: string;
  database: 'pglite' | 'postgres';
  redis: boolean;
}

/** The 503 a request gets while the process starts: its headers and body. */
export function startingAnswer(url: string | undefined, info: StartingInfo): { headers: Record<string, string>; body: string } {
  const health = (url ?? '').split('?')[0].replace(/\/+$/, '') === '/api/test';
  const body = health
    ? { success: false, status: 'starting', version: info.version, database: info.database, redis: info.redis }
    : { success: false, message: 'The service is starting; try again in a moment', code: 'STARTING' };
  const text = JSON.stringify(body);
  return {
    headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1', 'content-length': String(Buffer.byteLength(text)) },
    body: text,
  };
}

/** The same 503 written on a bare connection (the primary of a group has no HTTP server). */
export function rawStartingAnswer(requestLine: string, info: StartingInfo): string {
  const answer = startingAnswer(requestLine.split(' ')[1], info);
  const headers = Object.entries({ ...answer.headers, connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 503 Service Unavailable\r\n${headers.join('')}\r\n${answer.body}`;
}

export interface StartingServer {
  /** For Fastify's `serverFactory`: the app takes this (already listening) server. */
  serverFactory: FastifyServerFactory;
  /** Makes the app ready, then hands it every request from now on. */
  serve(app: FastifyInstance): Promise<void>;
  server: http.Server;
}

/** Listens at once on `port`/`host`, answering 503 until `serve` is called. */
export async function listenWhileStarting(options: { port: number; host: string; backlog: number; info: StartingInfo }): Promise<StartingServer> {
  let handle: RequestListener | undefined;
  let appHandler: RequestListener | undefined;
  const starting = (request: IncomingMessage, response: ServerResponse): void => {
    const answer = startingAnswer(request.url, options.info);
    response.writeHead(503, answer.headers).end(answer.body);
  };
  const server = http.createServer((request, response) => (handle ?? starting)(request, response));
  coalesceServerWrites(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: options.backlog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    serverFactory: (handler) => {
      appHandler = handler as RequestListener;
      return server;
    },
    async serve(app) {
      if (!appHandler) throw new Error('the app was not built on the starting server');
      drainInFlightOnClose(app, server);
      await app.ready();
      handle = appHandler;
    },
  };
}

/**
 * For a server Fastify did not listen on itself (this one, or an API process's in a group): Fastify's
 * close would neither stop accepting nor wait for requests in flight. A pre-close hook (after the
 * sockets' own) does both, as a listening server's close does.
 */
export function drainInFlightOnClose(app: FastifyInstance, server: http.Server = app.server): void {
  // A count, and one listener function shared by every answer: this runs on every request.
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const settleDrain = (): void => {
    server.closeIdleConnections();
    if (inFlight === 0) drained?.();
  };
  const answered = (): void => {
    inFlight -= 1;
    if (drained) settleDrain();
  };
  // Added after Socket.IO attached its own: Node calls every listener, so this sees every request.
  // A response emits 'close' once, however it ends.
  server.on('request', (_request, response: ServerResponse) => {
    inFlight += 1;
    response.on('close', answered);
  });
  app.addHook('preClose', async () => {
    if (server.listening) server.close();
    await new Promise<void>((resolve) => {
      drained = resolve;
      settleDrain();
    });
  });
}
