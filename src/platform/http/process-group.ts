// Several API processes on one port (API_PROCESSES; docs/architecture.md). The primary process listens
// and hands each new connection, with the bytes it read to see the request line, to one API process.
// A Socket.IO session's requests go to the process that holds the session (its id starts with that
// process's slot, `2-…`); every other connection goes to the next process in turn. The API processes
// never listen: their HTTP server serves the connections they are handed. node:cluster's own sharing
// cannot keep a long-polling session on one process, hence this.
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import net from 'node:net';
import { drainInFlightOnClose, rawStartingAnswer, type StartingInfo } from './starting.js';

/**
 * Connections the kernel holds for us before we accept them (node's default is 511; the kernel caps it
 * at net.core.somaxconn). When the queue is full a new connection is dropped and its client tries again
 * only after 1, then 3, 7 s: a busy event loop that accepts late should make clients wait their turn,
 * not back off for seconds. Listen overflows were counted (nstat TcpExtListenOverflows) during the
 * stream bench's 1,000-client runs with the default; the first-chunk tail there is mostly the work
 * (docs/decisions.md, "Streaming and sockets").
 */
export const LISTEN_BACKLOG = 4096;

/** What the primary sends with a connection: the bytes it already read from it. */
interface HandedConnection {
  type: 'api-group:connection';
  head: string;
}
interface Ready {
  type: 'api-group:ready';
}

/** The API process's slot in the group (0-based), or undefined outside a group. */
const SLOT_VARIABLE = 'API_PROCESS_SLOT';
/** A request line is read up to this many bytes; a longer one goes to the next process in turn. */
const MAX_HEAD_BYTES = 8 * 1024;
/** A connection that sends nothing for this long is closed by the primary. */
const HEAD_TIMEOUT_MS = 30_000;
/** A process that dies is started again after this pause (not in a tight loop). */
const RESTART_DELAY_MS = 1_000;

export function processGroupSlot(): number | undefined {
  const slot = cluster.isWorker ? Number(process.env[SLOT_VARIABLE]) : NaN;
  return Number.isInteger(slot) && slot >= 0 ? slot : undefined;
}

/**
 * Session ids of the Socket.IO engine of the API process in `slot`: each names the slot, so the primary
 * sends the session's later requests to that process (`choose` below reads it back).
 */
export function groupSessionIds(slot: number): () => string {
  return () => `${slot}-${randomBytes(15).toString('base64url')}`;
}

/**
 * In an API process: serves the connections the primary hands over, then tells it this process is
 * ready. The server never listens: requests in flight are waited for at close (starting.ts).
 */
export async function serveHandedConnections(app: FastifyInstance): Promise<void> {
  const server = app.server;
  drainInFlightOnClose(app, server);
  await app.ready();
  process.on('message', (message: HandedConnection | undefined, socket?: net.Socket) => {
    if (message?.type !== 'api-group:connection' || !socket) return;
    server.emit('connection', socket);
    // What the primary read comes first, then the socket is read as usual.
    socket.emit('data', Buffer.from(message.head, 'latin1'));
    socket.resume();
  });
  process.send?.({ type: 'api-group:ready' } satisfies Ready);
}

export interface ProcessGroupOptions {
  processes: number;
  port: number;
  host: string;
  /** Where Socket.IO's requests start, e.g. /socket.io. */
  socketPath: string;
  log: { info(details: object, message: string): void; error(details: object, message: string): void };
  /** What `GET /api/test` says while the group starts (every request is answered 503 until then). */
  starting: StartingInfo;
}

export interface ProcessGroup {
  /** The port listened on (the one asked for, or the one given for 0). */
  port: number;
  /** Stops accepting, asks every API process to stop (SIGTERM: in-flight requests finish), waits for them. */
  stop(): Promise<void>;
}

/**
 * In the primary: listens at once (answering 503 while starting), starts the API processes, waits
 * until each is ready, then hands out connections.
 */
export async function startProcessGroup(options: ProcessGroupOptions): Promise<ProcessGroup> {
  const slots: Array<Worker | undefined> = [];
  const ready = new Set<Worker>();
  let stopping = false;
  /** Once the group has started, a process that exits is started again (and again, a second apart). */
  let started = false;
  let turn = 0;

  const start = (slot: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ [SLOT_VARIABLE]: String(slot) });
      slots[slot] = worker;
      worker.on('message', (message: Ready | undefined) => {
        if (message?.type !== 'api-group:ready') return;
        ready.add(worker);
        resolve();
      });
      worker.once('exit', (code, signal) => {
        const wasReady = ready.delete(worker);
        if (slots[slot] === worker) slots[slot] = undefined;
        if (!wasReady) reject(new Error(`API process ${slot} exited before it was ready (${signal ?? `code ${code}`})`));
        if (stopping || !started) return;
        options.log.error({ slot, code, signal }, 'an API process exited; starting it again');
        setTimeout(() => {
          if (!stopping) start(slot).catch(() => {}); // its own exit is logged and retried here
        }, RESTART_DELAY_MS).unref();
      });
    });

  const sessionPattern = new RegExp(`^[A-Z]+ ${escapeRegExp(options.socketPath)}/?\\?(?:[^ ]*&)?sid=(\\d+)-`);
  const choose = (requestLine: string): Worker | undefined => {
    const slot = sessionPattern.exec(requestLine)?.[1];
    const owner = slot === undefined ? undefined : slots[Number(slot)];
    if (owner && ready.has(owner)) return owner;
    const members = slots.filter((worker): worker is Worker => worker !== undefined && ready.has(worker));
    if (members.length === 0) return undefined;
    turn = (turn + 1) % members.length;
    return members[turn];
  };

  const server = net.createServer({ pauseOnConnect: true }, (socket) => {
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const lineEnd = head.indexOf('\n');
      if (lineEnd === -1 && head.length < MAX_HEAD_BYTES) return;
      socket.off('data', onData);
      socket.setTimeout(0);
      const requestLine = lineEnd === -1 ? '' : head.toString('latin1', 0, lineEnd);
      if (!started) {
        // Still starting: answered here; the rest of the request is read and dropped.
        socket.on('data', () => {});
        socket.end(rawStartingAnswer(requestLine, options.starting));
        return;
      }
      // Stop reading at once, in this callback: what follows stays in the kernel for the API process.
      stopReading(socket);
      const target = choose(requestLine);
      if (!target) {
        socket.destroy();
        return;
      }
      const message: HandedConnection = { type: 'api-group:connection', head: head.toString('latin1') };
      target.send(message, socket, { keepOpen: false }, (error) => {
        if (error) socket.destroy();
      });
    };
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
    socket.setTimeout(HEAD_TIMEOUT_MS, () => socket.destroy());
    socket.resume();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  try {
    await Promise.all(Array.from({ length: options.processes }, (_, slot) => start(slot)));
  } catch (error) {
    stopping = true;
    for (const worker of slots) worker?.process.kill('SIGTERM');
    server.close();
    throw error;
  }
  started = true;

  const address = server.address();

  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    async stop() {
      stopping = true;
      // Stop accepting. Not awaited: its callback waits for every connection handed out to close,
      // which the API processes do as they stop.
      server.close();
      const running = slots.filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
      await Promise.all(
        running.map(
          (worker) =>
            new Promise<void>((resolve) => {
              worker.once('exit', () => resolve());
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

/**
 * The socket stops reading now and for good, so that every later byte stays in the kernel for the API
 * process. pause() alone lets libuv finish the read in progress into our buffer, and a paused stream
 * still refills its buffer after a chunk (its _read starts the handle reading again on the next tick):
 * bytes read then were lost when the handle was handed over (a WebSocket's first frame, seen about once
 * in 3,000 connections when a batch arrived together and handles queued behind each other's hand-over).
 */
export function stopReading(socket: net.Socket): void {
  socket._read = () => {};
  socket.pause();
  const handle = (socket as net.Socket & { _handle?: { reading?: boolean; readStop?: () => number } })._handle;
  if (handle?.readStop) {
    handle.reading = false;
    handle.readStop();
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
