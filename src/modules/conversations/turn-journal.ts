// What a crash mid-answer may lose, bounded. A turn's opening commits without waiting for its WAL flush
// (turn-record.repo.ts: waiting would add a disk flush to every answer's first chunk); PostgreSQL's WAL
// writer flushes it within about 0.6 s, but PGlite has no WAL writer, so nothing would. The journal
// flushes every opening within FLUSH_WITHIN_MS (one synchronous commit covers every commit before it, so
// one statement serves all turns opened meanwhile), and saves the answer streamed so far of every turn of
// the process that has run SAVE_EVERY_MS or longer, every SAVE_EVERY_MS, in one statement (a shorter
// answer ends before its first save: most never cost a write). After a crash the record shows what was
// sent, up to SAVE_EVERY_MS short of it; turn-holds.ts then ends it as interrupted.
import { sql } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';

export const FLUSH_WITHIN_MS = 200;
export const SAVE_EVERY_MS = 2_000;

export interface TurnJournal {
  /** The process written on every record it opens (service_processes): the sweeper settles records of gone ones. */
  readonly processId: string | undefined;
  opened(recordId: string): void;
  progress(recordId: string, answerSoFar: string): void;
  /** The turn settled (or failed): nothing more to save for it. */
  finished(recordId: string): void;
  /** Turns opened and not finished yet: the ones this process is answering. */
  readonly inProgress: number;
  close(): Promise<void>;
}

export interface TurnJournalOptions {
  processId?: string;
  flushWithinMs?: number;
  saveEveryMs?: number;
  log?: { warn(details: object, message: string): void };
}

export function createTurnJournal(db: Database, options: TurnJournalOptions = {}): TurnJournal {
  const flushWithinMs = options.flushWithinMs ?? FLUSH_WITHIN_MS;
  const saveEveryMs = options.saveEveryMs ?? SAVE_EVERY_MS;
  /** The latest answer of each turn not saved yet. */
  const unsaved = new Map<string, string>();
  /** When each turn in progress was opened (its first save is due SAVE_EVERY_MS later). */
  const openedAt = new Map<string, number>();
  let openingsToFlush = false;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let lastSave = 0;
  let closed = false;

  let dueAt = 0;

  /** A write in `inMs` at the latest (an earlier one already planned stays). */
  function schedule(inMs: number): void {
    if (closed) return;
    const at = Date.now() + Math.max(0, inMs);
    if (timer && dueAt <= at) return;
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(() => {
      timer = undefined;
      writing = writing.then(write);
    }, at - Date.now());
    timer.unref();
  }

  async function write(): Promise<void> {
    const now = Date.now();
    const due = [...unsaved].filter(([id]) => now - (openedAt.get(id) ?? 0) >= saveEveryMs);
    try {
      if (due.length > 0 && now - lastSave >= saveEveryMs) {
        const entries = due.map(([id, answer]) => ({ id, answer }));
        for (const [id] of due) unsaved.delete(id);
        openingsToFlush = false; // this synchronous commit flushes every opening before it
        lastSave = Date.now();
        // updated_at stays: it is the version the turn's settle checks, and this is not a change of the record's state.
        await db.execute(sql`update history as h set answer = v.answer
          from jsonb_to_recordset(${JSON.stringify(entries)}::jsonb) as v(id text, answer text)
          where h.id = v.id and h.status = 'streaming'`);
      } else if (openingsToFlush) {
        openingsToFlush = false;
        // A transaction with an id commits synchronously (the default), which flushes the WAL to here.
        await db.execute(sql`select txid_current()`);
      }
    } catch (err) {
      options.log?.warn({ err }, 'turn journal write failed');
    }
    if (unsaved.size > 0) schedule(Math.max(saveEveryMs - (Date.now() - lastSave), Math.min(...[...unsaved.keys()].map((id) => (openedAt.get(id) ?? 0) + saveEveryMs - Date.now()))));
  }

  return {
    processId: options.processId,
    opened(recordId) {
      openedAt.set(recordId, Date.now());
      openingsToFlush = true;
      schedule(flushWithinMs);
    },
    progress(recordId, answerSoFar) {
      unsaved.set(recordId, answerSoFar);
      // Due once its first save and the process's next save both are: known without the clock, so the
      // pieces of an answer (40 a second) mostly find the write planned already and read no clock.
      const due = Math.max(openedAt.get(recordId) ?? 0, lastSave) + saveEveryMs;
      if (timer && dueAt <= due) return;
      schedule(due - Date.now());
    },
    finished(recordId) {
      unsaved.delete(recordId);
      openedAt.delete(recordId);
    },
    get inProgress() {
      return openedAt.size;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await writing;
    },
  };
}
