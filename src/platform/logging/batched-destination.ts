// Where the service's log lines go (stdout): gathered into batches and written with one synchronous
// write each, when a batch is full, at least every `flushMs`, and on exit. A request's line costs
// an array push, and a busy process makes one write a few dozen requests.
//
// pino's asynchronous destination (sonic-boom) measured the length of its whole pending buffer in
// bytes on every line (a copy of up to 16 KB a line, most of a cached route's allocation) and handed
// each batch to a thread pool; a synchronous write of a batch is cheaper than the hand-off. Lines are
// written in the order they came, and none is lost short of a SIGKILL: what is pending goes out on
// process exit, an uncaught exception included. A pipe whose reader is slow holds the process up,
// as any synchronous log does, instead of growing a buffer without bound.
import fs from 'node:fs';

export interface LogDestination {
  /** Takes one line (pino's, or the request log's: newline included). */
  write(line: string): boolean;
  /** Writes what is pending now. */
  flushSync(): void;
  /** Stops the timer and the exit hook, after writing what is pending. */
  close(): void;
}

export interface BatchOptions {
  /** A batch is written once it holds this many characters. */
  batchChars?: number;
  /** What is pending is written at least this often (ms). */
  flushMs?: number;
}

/** How long to wait before trying again when a non-blocking descriptor is full (EAGAIN). */
const FULL_WAIT_MS = 5;

export function createBatchedDestination(fd: number, { batchChars = 4096, flushMs = 200 }: BatchOptions = {}): LogDestination {
  let pending: string[] = [];
  let pendingChars = 0;

  const flushSync = () => {
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    pendingChars = 0;
    writeAll(fd, Buffer.from(text));
  };
  const timer = setInterval(flushSync, flushMs);
  timer.unref();
  process.on('exit', flushSync);

  return {
    write(line) {
      pending.push(line);
      pendingChars += line.length;
      if (pendingChars >= batchChars) flushSync();
      return true;
    },
    flushSync,
    close() {
      flushSync();
      clearInterval(timer);
      process.removeListener('exit', flushSync);
    },
  };
}

function writeAll(fd: number, buffer: Buffer): void {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      // stdout is a non-blocking pipe whose reader has not caught up: wait for it, as a blocking write would.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FULL_WAIT_MS);
    }
  }
}
