// A turn's settles written together. On the embedded database each lone statement costs its thread a trip
// (messages, PGlite's protocol code, a plan's start, a commit) larger than its rows; one statement for
// several records pays it once. So a turn's settle waits a little for others while other turns are still
// answering (they will end soon), and the group is one statement (groupStatement). A settle may join
// when its cost is within its hold (every turn's, as a rule: the hold is its most expensive cost) and its
// balance is not below what turns hold: then each is charged exactly its cost, whatever the order, as its
// lone settle would. Any other settle, a record that moved on, and a balance below its holds are ended
// alone as before (finishAndCharge, or its caller's transaction), and so is any settle while no other
// turn is answering.
import { getTableColumns, getTableName } from 'drizzle-orm';
import type { Database } from '../../platform/db/client.js';
import { directRunnerOf, type DirectRunner } from '../../platform/db/direct-runner.js';
import { newId } from '../../platform/ids/ids.js';
import { balanceTable } from '../credits/credits.repo.js';
import { creditLedger, type CreditAccount } from '../credits/credits.tables.js';
import { balanceIdOf } from '../credits/payer.js';
import { history } from '../history/history.tables.js';
import { finishAndCharge, type OneStatementSettle } from './turn-record.repo.js';

/** How long the first settle of a group waits for others at most: what it adds to an answer's end. */
export const SETTLE_GROUP_WINDOW_MS = 20;
/** The most settles one statement writes: a full group goes at once. */
export const SETTLE_GROUP_MAX = 32;

export interface SettleGroups {
  /** finishAndCharge for a turn's own settle: one charged within its hold may join a group. */
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
  /** The statement it goes in: who pays (none when it moves no money) and the columns it sets. */
  shape: string;
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
      if (!runner || !groupable(settle)) return finishAndCharge(db, settle);
      return new Promise((resolve, reject) => {
        waiting.push({ settle, shape: shapeOf(settle), resolve, reject });
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

/** A settle a group may write: charged within its hold, finishing the version its turn opened. */
function groupable(settle: OneStatementSettle): boolean {
  return settle.record.version !== undefined && settle.cost <= settle.held;
}

/** The shape of the settles that charge nothing and hold nothing. */
const FREE = 'free';

/** The statement a settle goes in: `free` when it charges nothing and holds nothing, else its payer's account. */
function shapeOf(settle: OneStatementSettle): string {
  const moves = settle.cost > 0 || settle.held > 0 ? settle.payer.account : FREE;
  return `${moves}|${Object.keys(settle.values).sort().join(',')}`;
}

/** Writes a group: one statement for each shape among it (nearly always one). */
async function writeGroup(db: Database, runner: DirectRunner, group: Waiting[], log: SettleGroupOptions['log']): Promise<void> {
  const byShape = new Map<string, Waiting[]>();
  for (const entry of group) {
    const same = byShape.get(entry.shape);
    if (same) same.push(entry);
    else byShape.set(entry.shape, [entry]);
  }
  await Promise.all([...byShape].map(([shape, entries]) => writeSameShape(db, runner, shape, entries, log)));
}

async function writeSameShape(db: Database, runner: DirectRunner, shape: string, entries: Waiting[], log: SettleGroupOptions['log']): Promise<void> {
  if (entries.length === 1) {
    const [only] = entries;
    await finishAndCharge(db, only!.settle).then(only!.resolve, only!.reject);
    return;
  }
  let charged: Map<string, number>;
  try {
    const rows = await runner('', groupStatement(shape), [JSON.stringify(entries.map(inputOf))]);
    charged = new Map(rows.map((row) => [String(row[0]), Number(row[1])]));
  } catch (error) {
    // One bad settle must not fail the others: each runs alone, answering (or failing) as it would have.
    log.warn({ err: error, settles: entries.length }, 'a group of settles failed; each runs alone');
    await Promise.all(entries.map((entry) => finishAndCharge(db, entry.settle).then(entry.resolve, entry.reject)));
    return;
  }
  // A record not finished had moved on since its turn knew it, or its balance is below what turns hold:
  // its caller ends it in a transaction.
  for (const entry of entries) {
    const credits = charged.get(entry.settle.record.id);
    entry.resolve(credits === undefined ? undefined : { credits });
  }
}

/** One settle as the statement reads it: its record's new values keyed by their columns' names, and its money. */
function inputOf(entry: Waiting, order: number) {
  const { settle } = entry;
  const input: Record<string, unknown> = {
    settle_id: settle.record.id,
    settle_version: settle.record.version,
    settle_at: settle.at.toISOString(),
    settle_touches: settle.touchesConversation,
  };
  // A group that moves no money reads none of its money (absent, they read as null).
  if (!entry.shape.startsWith(`${FREE}|`)) {
    Object.assign(input, {
      settle_order: order,
      settle_cost: settle.cost,
      settle_held: settle.held,
      settle_balance: balanceIdOf(settle.payer),
      settle_ledger: newId(),
      settle_twin: settle.payer.twinId,
      settle_user: settle.payer.userId,
      settle_meta: settle.ledgerMeta,
    });
  }
  for (const [key, value] of Object.entries(settle.values)) input[COLUMNS.get(key)!.name] = value;
  return input;
}

/** History's columns by their names in the code: each one's name and type in the database. */
const COLUMNS = new Map(Object.entries(getTableColumns(history)).map(([key, column]) => [key, { name: column.name, type: column.getSQLType() }]));

const statements = new Map<string, string>();

/**
 * The settle of a group of one shape, from one JSON input. Each record is finished only if still
 * streaming, not deleted and at the version its turn opened, as finishAndCharge's. When the group moves
 * money, the paying rows are locked first, in the order of their keys (two groups never wait on each
 * other crosswise), and a balance's records are finished only while it is not below what turns hold
 * (each cost being within its own hold, each is then charged in full); each balance is debited the
 * sum of its charges and given back the sum of its holds once, and each charge has its ledger row with
 * the balance after it, in the group's order. Each conversation is touched once, by its latest settle.
 * Answers each finished record with its charge (as the record keeps it).
 *
 * PGlite keeps the plan made on its first runs, often while the tables are nearly empty, so the plan must
 * be the lone settle's at any size: each row found by its key. The planner takes a set function for 100
 * rows, and with that many it read a small table whole (and kept doing so as it grew); the id's length
 * check, always true for an id, makes it expect one row, so it looks each record up by its key. The state
 * checks are wrapped in `is true` so that no plan reads them through the index of streaming records
 * instead (which holds every answer in progress, a thousand at a thousand clients).
 */
function groupStatement(shape: string): string {
  let text = statements.get(shape);
  if (text) return text;
  const [moves, columns] = shape.split('|') as [CreditAccount | typeof FREE, string];
  const set = columns
    .split(',')
    .filter((key) => key !== 'credits')
    .map((key) => COLUMNS.get(key)!);
  const input = `input as (
    select * from jsonb_to_recordset($1::text::jsonb)
      as i(settle_id char(24), settle_version text, settle_at timestamptz, settle_touches boolean, settle_order integer, settle_cost numeric,
        settle_held numeric, settle_balance char(24), settle_ledger char(24), settle_twin char(24), settle_user char(24), settle_meta jsonb,
        ${set.map(({ name, type }) => `"${name}" ${type}`).join(', ')})
    where octet_length(i.settle_id) = 24
  )`;
  const finish = (from: string, charge: string) => `finished as (
    update history set ${set.map(({ name }) => `"${name}" = input."${name}"`).join(', ')}, "credits" = ${charge}, "updated_at" = now()
    from ${from}
    where history.id = input.settle_id
      and (history.status = 'streaming' and history.deleted_at is null and history.updated_at = input.settle_version::timestamptz) is true
    returning history.id, history.conversation_id, history.institution_id, history.credits as charge, input.*
  )`;
  const touched = `touched as (
    update conversations set last_activity_at = greatest(conversations.last_activity_at, latest.at)
    from (select conversation_id, institution_id, max(settle_at) as at from finished where settle_touches group by conversation_id, institution_id) latest
    where conversations.id = latest.conversation_id and (conversations.institution_id = latest.institution_id) is true
    returning conversations.id
  )`;
  if (moves === FREE) {
    text = `with ${input}, ${finish('input', '0')}, ${touched}
  select id, 0 from finished`;
  } else {
    const table = balanceTable(moves);
    const name = `"${getTableName(table)}"`;
    const [credits, used, held] = [table.credits.name, table.creditsUsed.name, table.creditsHeld.name].map((column) => `"${column}"`);
    const ledgerColumns = [creditLedger.id, creditLedger.twinId, creditLedger.account, creditLedger.userId, creditLedger.delta, creditLedger.balanceAfter, creditLedger.reason, creditLedger.meta]
      .map((column) => `"${column.name}"`)
      .join(', ');
    text = `with ${input}, locked as (
    select balance.id, balance.${credits} - balance.${held} as spendable from ${name} balance
    where balance.id in (select settle_balance from input) order by balance.id for update
  ), ${finish('input join locked on locked.id = input.settle_balance and locked.spendable >= 0', 'input.settle_cost')}, sums as (
    select settle_balance, sum(charge) as cost, sum(settle_held) as held from finished group by settle_balance
  ), charged as (
    update ${name} set ${credits} = ${name}.${credits} - sums.cost, ${used} = ${name}.${used} + sums.cost, ${held} = ${name}.${held} - sums.held
    from sums where ${name}.id = sums.settle_balance
    returning ${name}.id, ${name}.${credits} + sums.cost as before
  ), ledger as (
    insert into "${getTableName(creditLedger)}" (${ledgerColumns})
    select finished.settle_ledger, finished.settle_twin, '${moves}', finished.settle_user, -finished.charge,
      charged.before - sum(finished.charge) over (partition by finished.settle_balance order by finished.settle_order),
      'conversation.turn', finished.settle_meta
    from finished join charged on charged.id = finished.settle_balance
    where finished.charge > 0
    returning 1
  ), ${touched}
  select id, charge from finished`;
  }
  statements.set(shape, text);
  return text;
}
