// Where the service's log lines go (stdout): gathered into batches and written with one synchronous
// write each, when a batch is full, within `flushMs` of a batch's first line, and on exit. A request's
// line is encoded straight into the batch's buffer (no joining of strings, no buffer made per write),
// and a busy process makes one write a couple of hundred requests.
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
  /** The batch's size in bytes: it is written when the next line might not fit. */
  batchBytes?: number;
  /** What is pending is written at most this long (ms) after the first line of it came. */
  flushMs?: number;
}

/** How long to wait before trying again when a non-blocking descriptor is full (EAGAIN). */
const FULL_WAIT_MS = 5;

/** The most bytes a UTF-16 code unit takes in UTF-8 (a surrogate pair's two take four). */
const MAX_BYTES_PER_UNIT = 3;

export function createBatchedDestination(fd: number, { batchBytes = 65_536, flushMs = 200 }: BatchOptions = {}): LogDestination {
  const batch = Buffer.allocUnsafe(batchBytes);
  let used = 0;

  const flushSync = () => {
    if (used === 0) return;
    const length = used;
    used = 0;
    // Synchronous: the buffer is free again when this returns.
    writeAll(fd, batch.subarray(0, length));
  };
  // Armed by the first line of a batch, so that an idle process has no timer waking it.
  let timer: NodeJS.Timeout | undefined;
  const onTimer = () => {
    timer = undefined;
    flushSync();
  };
  process.on('exit', flushSync);

  return {
    write(line) {
      const most = line.length * MAX_BYTES_PER_UNIT;
      if (most > batchBytes - used) {
        flushSync();
        // A line longer than a whole batch goes out on its own.
        if (most > batchBytes) {
          writeAll(fd, Buffer.from(line));
          return true;
        }
      }
      used += batch.write(line, used);
      if (!timer) {
        timer = setTimeout(onTimer, flushMs);
        timer.unref();
      }
      return true;
    },
    flushSync,
    close() {
      flushSync();
      clearTimeout(timer);
      timer = undefined;
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
