// The embedded database's own thread: PGlite (PostgreSQL in WebAssembly) runs here, so its statements
// take the second core instead of holding every request of the main thread (pglite-thread.ts is the
// other end). Messages are requests ({ id, op, ... }) answered in order of completion ({ id, ok, ... }, a
// group commit's answers as one array), and notices ({ notify, channel, payload }) posted as PGlite hears
// them, before the answer of the statement that committed them (as on the main thread before). Kept
// statements outside transactions that arrive while others run are committed together, as one group
// (pglite-statements.ts, queryGroup).
import { mkdirSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type QueryOptions, type Results, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { seedFromEmptyCluster } from './empty-cluster.js';
import { withKeptStatements } from './pglite-statements.js';
import type { ThreadInit, ThreadRequest, ThreadAnswer, WireError } from './pglite-thread.js';

const port = parentPort!;
const init = workerData as ThreadInit;

// A new folder starts as a copy of the empty cluster, when there is one; PGlite's initdb makes it otherwise.
if (init.dataDir && !(init.emptyCluster && seedFromEmptyCluster(init.dataDir, init.emptyCluster))) mkdirSync(init.dataDir, { recursive: true });
/**
 * PostgreSQL's buffer cache lives in the WebAssembly memory and is touched whole at start: at the default
 * 128 MB it was a third of the embedded service's resident memory at rest (docs/decisions.md, "The
 * service as deployed"). Pages beyond it are read through PGlite's file layer (the OS keeps them cached).
 */
const SHARED_BUFFERS = '32MB';
const raw = new PGlite(init.dataDir ?? 'memory://', {
  // pg_trgm: the people list's search by fragment of a name or an email (admin-users.repo.ts).
  extensions: { vector, pg_trgm },
  startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
  loadDataDir: init.template ? new Blob([init.template as Uint8Array<ArrayBuffer>]) : undefined,
});
const client = withKeptStatements(raw);
/** Open transactions by id; `endId` is the request that ends one, answered once PGlite has committed or rolled back. */
const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => void; endId?: number }>();
const listening = new Map<string, () => Promise<void>>();
/** Rejects the work of a transaction the main thread rolls back (PGlite rolls back on any throw). */
class RolledBack extends Error {}

const ready = (async () => {
  await raw.waitReady;
  // A new 16 MB WAL segment is written full of zeros first (through PGlite's file layer: 40-70 ms of
  // CPU in the statement that needs it); the zeros only reserve disk space, so they are skipped.
  await raw.exec('set wal_init_zero = off');
})();

let answered = 0;
function answer(message: ThreadAnswer, transfer?: ArrayBuffer[]): void {
  port.postMessage(message, transfer);
  // The crash harness's stop (FAULT_KILL_AT=database:<n>): in a worker, process.exit ends the thread only.
  if (init.stopAfter !== undefined && ++answered >= init.stopAfter) process.exit(70);
}

/**
 * A group's answers in one message: each message costs both threads its own clone, event and wake-up.
 * The crash harness counts answers one by one, so under it they go one at a time.
 */
function answerAll(messages: ThreadAnswer[]): void {
  if (init.stopAfter !== undefined || messages.length === 1) messages.forEach((message) => answer(message));
  else port.postMessage(messages);
}

/** A PGlite error as data: its message and every field the server sent (code, detail, constraint, ...). */
function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === 'function' || (typeof value === 'object' && value !== null)) continue;
    fields[key] = value;
  }
  return { message: error.message, name: error.name, fields };
}

/** A statement's result as it crosses to the main thread: its rows, fields and count, nothing else. */
const onTheWire = ({ rows, fields, affectedRows }: Results<unknown>) => ({ rows, fields, affectedRows });

/** drizzle's parsers leave these types as the text PostgreSQL sent; no other parser crosses threads. */
/** The identity parsers of each set of text types, made once: the same object each time (pglite-statements.ts keeps its merge). */
const identityParsers = new Map<string, NonNullable<QueryOptions['parsers']>>();
function parsersOf(textTypes: number[] | undefined): QueryOptions['parsers'] {
  if (!textTypes) return undefined;
  const key = textTypes.join(',');
  let parsers = identityParsers.get(key);
  if (!parsers) identityParsers.set(key, (parsers = Object.fromEntries(textTypes.map((type) => [type, (value: string) => value]))));
  return parsers;
}

function executorOf(txId: number | undefined) {
  if (txId === undefined) return client;
  const open = transactions.get(txId);
  if (!open) throw new Error(`transaction ${txId} is not open`);
  return open.tx;
}

async function handle(request: ThreadRequest): Promise<void> {
  await ready;
  switch (request.op) {
    case 'query': {
      const result = await executorOf(request.tx).query(request.text, request.params, {
        rowMode: request.rowMode,
        parsers: parsersOf(request.textTypes),
      });
      answer({ id: request.id, ok: true, result: onTheWire(result) });
      return;
    }
    case 'exec': {
      const results = await executorOf(request.tx).exec(request.text);
      answer({ id: request.id, ok: true, result: results.map(onTheWire) });
      return;
    }
    case 'begin': {
      const txId = request.tx;
      let started = false;
      // Open until the main thread ends it; PGlite's lock keeps every other statement waiting meanwhile.
      const done = raw.transaction(
        (tx) =>
          new Promise<void>((resolve, reject) => {
            started = true;
            transactions.set(txId, { tx, end: (commit) => (commit ? resolve() : reject(new RolledBack())) });
            answer({ id: request.id, ok: true, result: null });
          }),
      );
      done.then(
        () => endAnswer(txId, null),
        (error: unknown) => {
          // BEGIN itself failed: the main thread is still waiting for the begin's answer.
          if (!started) answer({ id: request.id, ok: false, error: toWire(error) });
          else endAnswer(txId, error instanceof RolledBack ? null : error);
        },
      );
      return;
    }
    case 'end': {
      const open = transactions.get(request.tx);
      if (!open) throw new Error(`transaction ${request.tx} is not open`);
      open.endId = request.id;
      open.end(request.commit);
      return;
    }
    case 'listen': {
      if (!listening.has(request.channel)) {
        const channel = request.channel;
        listening.set(channel, await raw.listen(channel, (payload) => port.postMessage({ notify: true, channel, payload })));
      }
      answer({ id: request.id, ok: true, result: null });
      return;
    }
    case 'unlisten': {
      const stop = listening.get(request.channel);
      listening.delete(request.channel);
      if (stop && !raw.closed) await stop();
      answer({ id: request.id, ok: true, result: null });
      return;
    }
    case 'dump': {
      const dump = await raw.dumpDataDir('none');
      const bytes = await dump.arrayBuffer();
      answer({ id: request.id, ok: true, result: bytes }, [bytes]);
      return;
    }
    case 'close': {
      if (!raw.closed) await raw.close();
      answer({ id: request.id, ok: true, result: null });
      return;
    }
  }
}

/** The answer of a transaction's `end` request, once PGlite has committed or rolled back. */
function endAnswer(txId: number, error: unknown): void {
  const id = transactions.get(txId)?.endId;
  transactions.delete(txId);
  if (id === undefined) return;
  if (error) answer({ id, ok: false, error: toWire(error) });
  else answer({ id, ok: true, result: null });
}

type QueryRequest = Extract<ThreadRequest, { op: 'query' }>;
/** The most statements one group commits together: the first of a group waits for the rest. */
const MAX_GROUP = 16;
/** Kept statements outside transactions that arrived while the previous ones ran (group commit). */
const waiting: QueryRequest[] = [];
let draining = false;

/** Resolves once the event loop has turned: the messages that arrived meanwhile have been heard. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs what waits as groups until nothing does. A group holds every statement heard while the previous
 * one ran, so under load one commit serves many statements, and when idle a statement waits one turn of
 * the event loop, never for a group to fill.
 */
async function drain(): Promise<void> {
  draining = true;
  try {
    await ready;
    // Messages reach this thread one event at a time, each running its statements to the end in
    // microtasks: the next ones are heard only once the loop turns, so every group starts after a turn.
    while ((await nextTurn(), waiting.length > 0)) {
      const group = waiting.splice(0, MAX_GROUP);
      const statements = group.map((request) => ({
        text: request.text,
        params: request.params ?? [],
        options: { rowMode: request.rowMode, parsers: parsersOf(request.textTypes) },
      }));
      try {
        const answers = await client.queryGroup(statements);
        answerAll(answers.map((outcome, index) => {
          const id = group[index]!.id;
          return outcome.ok ? { id, ok: true, result: onTheWire(outcome.result) } : { id, ok: false, error: toWire(outcome.error) };
        }));
      } catch (error) {
        answerAll(group.map((request) => ({ id: request.id, ok: false, error: toWire(error) })));
      }
    }
  } finally {
    draining = false;
  }
}

port.on('message', (request: ThreadRequest) => {
  if (request.op === 'query' && request.tx === undefined && request.params?.length && client.isKept(request.text)) {
    waiting.push(request);
    if (!draining) void drain();
    return;
  }
  handle(request).catch((error: unknown) => answer({ id: request.id, ok: false, error: toWire(error) }));
});

