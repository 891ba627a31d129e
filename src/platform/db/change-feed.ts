// Row change notices (migration 0008) as a feed for per-process caches. Triggers NOTIFY "<table>:<key>"
// on channel row_changes when a cached kind of row changes; the database delivers it to every listening
// process after the commit, in commit order. Caches drop what a change makes stale.
//
// What a cache may serve also depends on changes this process committed a moment ago whose notices are
// still on the way (a server delivers them asynchronously). `fence()` after such a write sends a notice
// of our own; notices arrive in commit order, so once it is back every earlier change has been heard.
// Until then `caughtUp` is false and caches answer from the database. A writer that knows exactly which
// cached rows it changed says so instead (`committed`): this process's caches drop them at once, no
// round trip, and `caughtUp` stays true (the conversation turn's charge does this, 100 times a second
// under load, where a fence each time would keep caches from serving most of the time). A process that
// answers for a change another one committed (a turn run elsewhere: turn-handoff.ts) awaits `catchUp`:
// the same notice of its own, but its caches keep serving meanwhile (no client was told of it yet).
import { randomBytes } from 'node:crypto';
import type { DatabaseHandle } from './client.js';

export const ROW_CHANGES_CHANNEL = 'row_changes';

/** `table` is the changed row's table; `*` means changes may have been missed: forget everything. */
export interface RowChange {
  table: string;
  key: string;
}

export interface ChangeFeed {
  subscribe(listener: (change: RowChange) => void): () => void;
  /** Call once this process has committed a change it is about to tell a client about. */
  fence(): void;
  /** Call once this process has committed a change to this row: its caches drop it now (the notice follows for the other processes). */
  committed(change: RowChange): void;
  /** Resolves once every change committed (by any process) before the call has been heard here. */
  catchUp(): Promise<void>;
  /** Listening, and every fence asked for so far has come back. */
  readonly caughtUp: boolean;
  close(): Promise<void>;
}

const FENCE = 'fence';

export async function openChangeFeed(database: Pick<DatabaseHandle, 'kind' | 'listen' | 'executeSql'>): Promise<ChangeFeed> {
  const listeners = new Set<(change: RowChange) => void>();
  const tag = randomBytes(6).toString('hex');
  // PGlite has one connection and delivers a notice before the committing query resolves: nothing to wait for.
  const immediate = database.kind === 'pglite';
  let live = true;
  /** Our own notices asked for (fences and catch-ups), the last a fence asked for, and the last heard. */
  let requested = 0;
  let fenced = 0;
  let heard = 0;
  let inFlight = false;
  let closed = false;
  const catchingUp: Array<{ seq: number; resolve: () => void }> = [];

  const emit = (change: RowChange) => {
    for (const listener of listeners) listener(change);
  };
  /** Releases the catch-ups whose notice was heard; all of them once everything was forgotten. */
  const release = (all = false) => {
    for (let i = catchingUp.length - 1; i >= 0; i--) {
      if (all || catchingUp[i].seq <= heard) catchingUp.splice(i, 1)[0].resolve();
    }
  };

  function sendFence(): void {
    if (inFlight || closed || heard >= requested) return;
    inFlight = true;
    const seq = requested;
    database.executeSql('select pg_notify($1, $2)', [ROW_CHANGES_CHANNEL, `${FENCE}:${tag}:${seq}`]).catch(() => {
      // The notice could not be sent: forgetting everything is as good as hearing it.
      inFlight = false;
      heard = Math.max(heard, seq);
      emit({ table: '*', key: '*' });
      release();
      sendFence();
    });
  }

  function onPayload(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon <= 0) return;
    const table = payload.slice(0, colon);
    const key = payload.slice(colon + 1);
    if (table !== FENCE) return emit({ table, key });
    const [owner, seq] = key.split(':');
    if (owner !== tag) return;
    inFlight = false;
    heard = Math.max(heard, Number(seq));
    release();
    sendFence();
  }

  function onLive(now: boolean): void {
    live = now;
    // Whatever was said while the connection was down is lost.
    emit({ table: '*', key: '*' });
    release(true);
    if (now) {
      inFlight = false;
      sendFence();
    }
  }

  const unlisten = await database.listen(ROW_CHANGES_CHANNEL, onPayload, onLive);
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    fence() {
      if (immediate || closed) return;
      fenced = requested += 1;
      sendFence();
    },
    committed(change) {
      if (!closed) emit(change);
    },
    catchUp() {
      // Not listening: caches serve nothing until they are, and then start from nothing.
      if (immediate || closed || !live) return Promise.resolve();
      const seq = (requested += 1);
      return new Promise<void>((resolve) => {
        catchingUp.push({ seq, resolve });
        sendFence();
      });
    },
    get caughtUp() {
      return live && !closed && heard >= fenced;
    },
    async close() {
      closed = true;
      release(true);
      listeners.clear();
      await unlisten();
    },
  };
}
