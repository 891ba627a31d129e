// Writes to the clients' connections leave together, once a turn of the event loop. A connection's
// bytes are handed to the kernel when the loop has run what it had to run (the check phase, after the
// I/O callbacks), not in the middle of it: every answer the turn ended, every piece it streamed, goes
// out in one run of system calls. On a machine where the readers share the host (a proxy in front, the
// load generator of a bench) each write that finds its reader asleep pays for waking it; written
// together, the first wakes it and the rest find it awake. Figures and the cost: decisions.md
// ("Connections' writes leave once a loop turn") and performance.md (bench:http).
//
// What a write sees does not change: the stream layer already allows a socket's write to finish later
// (a full kernel buffer does the same), so order, back-pressure, callbacks and errors are the stream's
// own. A write is held at most until the loop's next check phase, normally microseconds.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

type Flush = () => void;

const waiting: Flush[] = [];
let scheduled = false;

function flushAll(): void {
  scheduled = false;
  // A write's callback may start the socket's next write, which queues for the next turn.
  const now = waiting.splice(0);
  for (const flush of now) flush();
}

function later(flush: Flush): void {
  waiting.push(flush);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushAll);
  }
}

const COALESCED = Symbol('coalesced writes');

/** The socket's writes reach the kernel at the loop turn's check phase (once per socket). */
export function coalesceWrites(socket: Socket): void {
  const held = socket as Socket & { [COALESCED]?: true };
  if (held[COALESCED]) return;
  held[COALESCED] = true;
  const write = socket._write;
  const writev = socket._writev;
  socket._write = function (chunk, encoding, callback) {
    later(() => write.call(this, chunk, encoding, callback));
  };
  if (writev) {
    socket._writev = function (chunks, callback) {
      later(() => writev.call(this, chunks, callback));
    };
  }
}

/** Every connection the server accepts (or is handed) from now on coalesces its writes. */
export function coalesceServerWrites(server: Server): void {
  const marked = server as Server & { [COALESCED]?: true };
  if (marked[COALESCED]) return;
  marked[COALESCED] = true;
  server.on('connection', coalesceWrites);
}
