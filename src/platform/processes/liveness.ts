// A process's liveness: its row in service_processes, refreshed every third of the timeout. Another
// process counts it gone once it has not been heard from for the timeout (a SIGKILL, a lost machine),
// or at once when it stopped cleanly. On the embedded shape (PGlite) one process owns the data, so at
// start every other row is of a process that is gone, and it beats once, a beat's interval after start:
// no other process can be gone after that. What a gone process held is taken back by the tasks run after
// each beat (job attempts, streaming answers).
import { newId } from '../ids/ids.js';
import type { DatabaseHandle } from '../db/client.js';

export const DEFAULT_PROCESS_TIMEOUT_SECONDS = 15;

export interface ProcessLiveness {
  readonly id: string;
  readonly timeoutSeconds: number;
  /** No other process shares the database (PGlite): at start, every other process counts as gone. */
  readonly exclusive: boolean;
  /** Writes this process's row (and on an exclusive database forgets every other) and starts beating (exclusive: once). */
  start(): Promise<void>;
  /** Stops beating and removes the row: this process's holdings count as gone at once. */
  stop(): Promise<void>;
  /** A task run after each beat (and once at start), one at a time; its failure is logged, not thrown. */
  onBeat(task: () => Promise<void>): () => void;
  /** Runs the tasks now (tests, and start). */
  beat(): Promise<void>;
  /** Which of these process ids are gone (never this process's own). */
  goneOf(ids: string[]): Promise<Set<string>>;
}

export interface LivenessOptions {
  role: string;
  timeoutSeconds?: number;
  /** True when no other process can share the database (PGlite): other rows are of dead processes. */
  exclusive?: boolean;
  logger?: { error(o: object, m?: string): void };
}

/**
 * SQL true when the process named by `processColumn` (an expression) is gone. `$n` is the parameter
 * holding the timeout in seconds.
 */
export function processGoneSql(processColumn: string, timeoutParam: string): string {
  return `not exists (select 1 from service_processes p where p.id = ${processColumn} and p.seen_at > now() - ${timeoutParam} * interval '1 second')`;
}

export function createProcessLiveness(database: DatabaseHandle, options: LivenessOptions): ProcessLiveness {
  const id = newId();
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_PROCESS_TIMEOUT_SECONDS;
  const tasks = new Set<() => Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | null = null;
  let stopped = false;

  const refresh = () =>
    database.executeSql(
      `insert into service_processes (id, role) values ($1, $2) on conflict (id) do update set seen_at = now()`,
      [id, options.role],
    );

  async function runBeat(): Promise<void> {
    try {
      await refresh();
      for (const task of tasks) {
        if (stopped) return;
        await task().catch((err: unknown) => options.logger?.error({ err }, 'liveness task failed'));
      }
    } catch (err) {
      options.logger?.error({ err }, 'liveness beat failed');
    }
  }

  function beat(): Promise<void> {
    // One beat at a time: a slow database must not pile them up.
    beating ??= runBeat().finally(() => (beating = null));
    return beating;
  }

  return {
    id,
    timeoutSeconds,
    exclusive: options.exclusive ?? false,
    async start() {
      stopped = false;
      await refresh();
      if (options.exclusive) await database.executeSql(`delete from service_processes where id <> $1`, [id]);
      // Rows of processes gone for a day are only clutter (their holdings were taken back long ago).
      await database.executeSql(`delete from service_processes where seen_at < now() - interval '1 day'`);
      const every = Math.max(200, (timeoutSeconds * 1000) / 3);
      // Exclusive: no other process can go away while this one runs, so after one beat (for the tasks
      // registered after start, e.g. unfinished writes of the processes before it) nothing is left for
      // the tasks to find, and beating on would only cost an idle service CPU.
      timer = options.exclusive ? setTimeout(() => void beat(), every) : setInterval(() => void beat(), every);
      timer.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await beating;
      await database.executeSql(`delete from service_processes where id = $1`, [id]).catch(() => {});
    },
    onBeat(task) {
      tasks.add(task);
      return () => void tasks.delete(task);
    },
    beat,
    async goneOf(ids) {
      const others = ids.filter((other) => other !== id);
      if (others.length === 0) return new Set();
      const { rows } = await database.executeSql(
        `select id from service_processes where id = any($1::text[]) and seen_at > now() - $2 * interval '1 second'`,
        [others, timeoutSeconds],
      );
      const alive = new Set(rows.map((row: { id: string }) => row.id));
      return new Set(others.filter((other) => !alive.has(other)));
    },
  };
}
