// A small pool of worker threads for CPU-heavy work (the built-in embedder, extraction of PDFs and
// office files, chunking), so the API's event loop keeps answering while it runs. A pool serves one
// tasks module (an export `tasks: Record<name, (input) => output>`); workers start on first use, are
// replaced when one dies, and do not keep the process alive when idle. Inputs and outputs are copied
// (structured clone) unless transferred.
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface CpuPool {
  run<T>(task: string, input: unknown, transfer?: ArrayBuffer[]): Promise<T>;
  close(): Promise<void>;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
}

/** The URL of a module beside the caller (`import.meta.url`), with the caller's own extension (.ts from sources, .js built). */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}${path.extname(fileURLToPath(callerUrl))}`, callerUrl);
}

/** tsx's ESM register API (its package's `tsx/esm/api` import entry, found from the package's own file). */
const TSX_API = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;

/** Threads per pool: one core is left to the event loop; at most 2, since this is bursty, not throughput, work. */
export const DEFAULT_POOL_SIZE = Math.max(1, Math.min(2, os.availableParallelism() - 1));

/** Rebuilds an error from a worker, keeping its name so callers can tell kinds apart (e.g. ExtractionError). */
export class CpuTaskError extends Error {}

export function createCpuPool(tasksUrl: URL, size = DEFAULT_POOL_SIZE): CpuPool {
  const slots: Slot[] = [];
  let next = 0;
  let sequence = 0;
  let closed = false;

  function spawn(): Slot {
    const entry = siblingModule(import.meta.url, 'cpu-worker');
    const worker = entry.pathname.endsWith('.ts')
      ? // Run from sources (npm start, tests): tsx's loader is registered in the thread before the entry loads
        // (an inherited `--import tsx` registers too late for the entry itself on Node 20).
        new Worker(`import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`, {
          eval: true,
          workerData: { tasksUrl: tasksUrl.href },
        })
      : new Worker(entry, { workerData: { tasksUrl: tasksUrl.href } });
    const slot: Slot = { worker, pending: new Map() };
    worker.unref();
    worker.on('message', ({ id, output, error }: { id: number; output?: unknown; error?: { name: string; message: string } }) => {
      const waiting = slot.pending.get(id);
      if (!waiting) return;
      slot.pending.delete(id);
      if (slot.pending.size === 0) worker.unref();
      if (error) {
        const failure = new CpuTaskError(error.message);
        failure.name = error.name;
        waiting.reject(failure);
      } else {
        waiting.resolve(output);
      }
    });
    const fail = (error: Error) => {
      for (const waiting of slot.pending.values()) waiting.reject(error);
      slot.pending.clear();
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`CPU worker exited (code ${code})`)));
    return slot;
  }

  function pick(): Slot {
    // Fill up to size, then the least busy (round robin among equals).
    if (slots.length < size) {
      const slot = spawn();
      slots.push(slot);
      return slot;
    }
    next = (next + 1) % slots.length;
    let best = slots[next];
    for (const slot of slots) if (slot.pending.size < best.pending.size) best = slot;
    return best;
  }

  return {
    run<T>(task: string, input: unknown, transfer: ArrayBuffer[] = []): Promise<T> {
      if (closed) return Promise.reject(new Error('The CPU pool is closed'));
      const slot = pick();
      const id = ++sequence;
      return new Promise<T>((resolve, reject) => {
        slot.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        slot.worker.ref();
        slot.worker.postMessage({ id, task, input }, transfer);
      });
    },
    async close() {
      closed = true;
      await Promise.all(slots.splice(0).map((slot) => slot.worker.terminate()));
    },
  };
}
