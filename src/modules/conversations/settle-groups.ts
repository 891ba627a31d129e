// Settles that move no money, written together. Most turns of a deployment on a free model (the built-in
// one, or any model without a price) end charging nothing and giving back no hold: their settle only
// finishes the record and touches its conversation. On the embedded database each lone statement costs
// its thread a trip (messages, PGlite's protocol code, a plan's start, a commit) larger than its rows;
// one statement for several records pays it once. So such a settle waits a little for others while other
// turns are still answering (they will end soon), and the group is one statement (groupStatement). A
// settle that charges or gives back a hold, and any settle while no other turn is answering, runs at once
// and alone (finishAndCharge): money keeps its one-statement rule (turn-record.repo.ts).
import { getTableColumns } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';
import { directRunnerOf, type DirectRunner } from '../../platform/db/direct-runner.js';
import { history } from '../history/history.tables.js';
import { finishAndCharge, type OneStatementSettle } from './turn-record.repo.js';

/** How long the first settle of a group waits for others at most: what it adds to an answer's end. */
export const SETTLE_GROUP_WINDOW_MS = 20;
/** The most settles one statement writes: a full group goes at once. */
export const SETTLE_GROUP_MAX = 32;

export interface SettleGroups {
  /** finishAndCharge for a turn's own settle: one that moves no money may join a group. */
  settle(settle: OneStatementSettle): Promise<{ credits: number } | undefined>;
  /** Writes what waits now, and waits for what is being written. */
  close(): Promise<void>;
}

export interface SettleGroupOptions {
  /** Turns this process is answering now, the settling ones included (turn-journal.ts). */
  inProgress: () => number;
  /** Told when a group's statement failed and its settles ran alone. */
  log: { warn(details: object, message: string): void };
  windowMs?: number;
  max?: number;
}

interface Waiting {
  settle: OneStatementSettle;
  columns: string;
  resolve(settled: { credits: number } | undefined): void;
  reject(error: unknown): void;
}

export function createSettleGroups(db: Database, options: SettleGroupOptions): SettleGroups {
  const windowMs = options.windowMs ?? SETTLE_GROUP_WINDOW_MS;
  const max = options.max ?? SETTLE_GROUP_MAX;
  const runner = directRunnerOf(db);
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;
  const writing = new Set<Promise<void>>();

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const group = waiting;
    waiting = [];
    if (group.length === 0) return;
    const written = writeGroup(db, runner!, group, options.log).finally(() => writing.delete(written));
    writing.add(written);
  };

  return {
    settle(settle) {
      if (!runner || !movesNoMoney(settle)) return finishAndCharge(db, settle);
      return new Promise((resolve, reject) => {
        waiting.push({ settle, columns: Object.keys(settle.values).sort().join(','), resolve, reject });
        // Nobody else is answering: no one will join, so the group goes now.
        const others = options.inProgress() - waiting.length;
        if (waiting.length >= max || others <= 0) flush();
        else timer ??= setTimeout(flush, windowMs);
      });
    },
    async close() {
      flush();
      await Promise.all([...writing]);
    },
  };
}

/** A settle the group may write: it charges nothing, gives back no hold, and finishes the version its turn opened. */
function movesNoMoney(settle: OneStatementSettle): boolean {
  return settle.cost <= 0 && settle.held <= 0 && settle.record.version !== undefined;
}

/** Writes a group: one statement for each set of columns among it (nearly always one). */
async function writeGroup(db: Database, runner: DirectRunner, group: Waiting[], log: SettleGroupOptions['log']): Promise<void> {
  const byColumns = new Map<string, Waiting[]>();
  for (const entry of group) {
    const same = byColumns.get(entry.columns);
    if (same) same.push(entry);
    else byColumns.set(entry.columns, [entry]);
  }
  await Promise.all([...byColumns].map(([columns, entries]) => writeSameColumns(db, runner, columns, entries, log)));
}

async function writeSameColumns(db: Database, runner: DirectRunner, columns: string, entries: Waiting[], log: SettleGroupOptions['log']): Promise<void> {
  if (entries.length === 1) {
    const [only] = entries;
    await finishAndCharge(db, only!.settle).then(only!.resolve, only!.reject);
    return;
  }
  let finished: Set<string>;
  try {
    const rows = await runner('', groupStatement(columns), [JSON.stringify(entries.map(inputOf))]);
    finished = new Set(rows.map((row) => String(row[0])));
  } catch (error) {
    // One bad settle must not fail the others: each runs alone, answering (or failing) as it would have.
    log.warn({ err: error, settles: entries.length }, 'a group of settles failed; each runs alone');
    await Promise.all(entries.map((entry) => finishAndCharge(db, entry.settle).then(entry.resolve, entry.reject)));
    return;
  }
  // A record not finished had moved on since its turn knew it: its caller ends it in a transaction.
  for (const entry of entries) entry.resolve(finished.has(entry.settle.record.id) ? { credits: 0 } : undefined);
}

/** One settle as the statement reads it: the record's new values keyed by their columns' names. */
function inputOf(entry: Waiting) {
  const { settle } = entry;
  const input: Record<string, unknown> = { settle_id: settle.record.id, settle_version: settle.record.version, settle_at: settle.at.toISOString(), settle_touches: settle.touchesConversation };
  for (const [key, value] of Object.entries(settle.values)) input[COLUMNS.get(key)!.name] = value;
  return input;
}

/** History's columns by their names in the code: each one's name and type in the database. */
const COLUMNS = new Map(Object.entries(getTableColumns(history)).map(([key, column]) => [key, { name: column.name, type: column.getSQLType() }]));

const statements = new Map<string, string>();

/**
 * The settle of a group whose records set the same columns, from one JSON input: each record finished
 * only if still streaming, not deleted and at the version its turn opened (as finishAndCharge's, with
 * credits 0), and each conversation touched once, by its latest settle. Answers the ids finished.
 * PGlite keeps the plan made on its first runs, often while the table is nearly empty, so the plan must
 * be the lone settle's at any size: each record found by its key. The planner takes a set function for
 * 100 rows, and with that many it read a small table whole (and kept doing so as it grew); the id's
 * length check, always true for an id, makes it expect one row, so it looks each record up by its key.
 * The state checks are wrapped in `is true` so that no plan reads them through the index of streaming
 * records instead (which holds every answer in progress, a thousand at a thousand clients).
 */
function groupStatement(columns: string): string {
  let text = statements.get(columns);
  if (text) return text;
  const set = columns
    .split(',')
    .filter((key) => key !== 'credits')
    .map((key) => COLUMNS.get(key)!);
  text = `with input as (
    select * from jsonb_to_recordset($1::text::jsonb)
      as i(settle_id char(24), settle_version text, settle_at timestamptz, settle_touches boolean, ${set.map(({ name, type }) => `"${name}" ${type}`).join(', ')})
    where octet_length(i.settle_id) = 24
  ), finished as (
    update history set ${set.map(({ name }) => `"${name}" = input."${name}"`).join(', ')}, "credits" = 0, "updated_at" = now()
    from input
    where history.id = input.settle_id
      and (history.status = 'streaming' and history.deleted_at is null and history.updated_at = input.settle_version::timestamptz) is true
    returning history.id, history.conversation_id, history.institution_id, input.settle_at, input.settle_touches
  ), touched as (
    update conversations set last_activity_at = greatest(conversations.last_activity_at, latest.at)
    from (select conversation_id, institution_id, max(settle_at) as at from finished where settle_touches group by conversation_id, institution_id) latest
    where conversations.id = latest.conversation_id and (conversations.institution_id = latest.institution_id) is true
    returning conversations.id
  )
  select id from finished`;
  statements.set(columns, text);
  return text;
}
