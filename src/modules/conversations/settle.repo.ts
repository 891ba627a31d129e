// The end of a turn as ONE statement: the record finished, its cost charged to the balance that pays
// and its hold given back (never charging more than the hold plus what is spendable), the ledger row
// written and the conversation touched. One
// statement, so the balance's row lock, which every turn of a person (or of a pooling twin) shares, is
// held only while the server runs it and commits, never across a trip back to this process: with a
// transaction of several statements, turns ending together queued on that lock for as long as the busy
// process took to send each next statement, and held pooled connections while they waited.
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { executeShaped } from '../../platform/db/prepared.js';
import { newId } from '../../platform/ids/ids.js';
import type { CreditAccount } from '../credits/credits.tables.js';
import { creditLedger } from '../credits/credits.tables.js';
import { historyVersion, type HistoryUpdate } from '../history/history.repo.js';
import { conversations, history, type HistoryRow } from '../history/history.tables.js';
import { institutions } from '../institutions/institutions.tables.js';
import { users } from '../users/users.tables.js';

export interface OneStatementSettle {
  /**
   * The record as the turn opened it (OpenedRecord): finished only if still streaming and unchanged since
   * (no version: whatever it holds now, for the sweeper of turns whose process died).
   */
  record: { id: string; version?: string };
  /** What the record becomes (finishValues), its credits aside: the statement sets those. */
  values: HistoryUpdate;
  touchesConversation: boolean;
  at: Date;
  /** What the usage costs; 0 charges nothing (and, with nothing held, locks nothing). */
  cost: number;
  /** What the record holds of the balance (its heldCredits as opened); given back by the statement. */
  held: number;
  payer: { account: CreditAccount; institutionId: string; userId: string };
  ledgerMeta: Record<string, unknown>;
}

/**
 * Runs the settle; undefined when the record was no longer streaming or changed after it was opened (the
 * caller then settles in a transaction that locks it). The charge is least(cost, balance) read under
 * the balance's row lock inside the statement, so racing turns never overdraw it. Outside a
 * transaction the statement is prepared once per shape (who pays, whether it charges, which columns):
 * building it costs drizzle about a millisecond, more than the database takes to run it.
 */
export async function finishAndCharge(db: Executor, settle: OneStatementSettle): Promise<{ row: HistoryRow; credits: number } | undefined> {
  const { account, institutionId, userId } = settle.payer;
  const values: Record<string, unknown> = {
    ...Object.fromEntries(Object.entries(settle.values).map(([key, value]) => [`v_${key}`, value])),
    id: settle.record.id,
    version: settle.record.version,
    cost: settle.cost,
    held: settle.held,
    balanceId: account === 'institution' ? institutionId : userId,
    ledgerId: newId(),
    institutionId,
    userId,
    meta: JSON.stringify(settle.ledgerMeta),
    at: settle.at.toISOString(),
  };
  const shape: SettleShape = {
    account,
    charging: settle.cost > 0 || settle.held > 0,
    touches: settle.touchesConversation,
    versioned: settle.record.version !== undefined,
    columns: Object.keys(settle.values).sort(),
  };
  if (shape.versioned) values.version = settle.record.version;
  else delete values.version;
  const key = `settle_turn:${shape.account}:${shape.charging}:${shape.touches}:${shape.versioned}:${shape.columns.join(',')}`;
  const [row] = await executeShaped(db, key, (d, param) => settleQuery(d, shape, param), values);
  if (!row) return undefined;
  return { row: row as HistoryRow, credits: row.credits };
}

interface SettleShape {
  account: CreditAccount;
  /** The balance row is locked and changed: a cost to charge, or a hold to give back. */
  charging: boolean;
  touches: boolean;
  /** Finish only the version the turn opened (else any streaming version: the hold sweeper). */
  versioned: boolean;
  /** The record's columns set, besides credits and updated_at. */
  columns: string[];
}

/** The settle statement of a shape, its inputs given by `param` (placeholders to prepare, or the values). */
function settleQuery(db: Executor, shape: SettleShape, param: (name: string) => unknown) {
  const table = shape.account === 'institution' ? institutions : users;
  const { credits, creditsUsed } = table;
  const { creditsHeld } = table;
  // The paying row, locked (and read as its latest version) for the rest of the statement: what this
  // turn may be charged is its own hold plus what no turn holds.
  const locked = db.$with('locked', { balance: sql<number>`balance` }).as(
    sql`select ${credits} - ${creditsHeld} + ${param('held')}::numeric as balance from ${table} where ${table.id} = ${param('balanceId')} for update`,
  );
  const charge = shape.charging ? sql`coalesce((select least(${param('cost')}::numeric, greatest(balance, 0)) from locked), 0)` : sql`0`;
  const set = Object.fromEntries(shape.columns.map((column) => [column, param(`v_${column}`)]));
  const finished = db.$with('finished').as(
    db
      .update(history)
      .set({ ...set, credits: charge, updatedAt: sql`now()` })
      .where(
        and(
          eq(history.id, param('id') as string),
          eq(history.status, 'streaming'),
          shape.versioned ? sql`${history.updatedAt} = ${param('version')}::timestamptz` : sql`${history.heldCredits} = ${param('held')}::numeric`,
        ),
      )
      .returning(),
  );
  const charged = db.$with('charged', { balance: sql<number>`balance`, amount: sql<number>`amount` }).as(
    sql`update ${table} set ${sql.identifier(credits.name)} = ${credits} - finished.credits, ${sql.identifier(creditsUsed.name)} = ${creditsUsed} + finished.credits,
          ${sql.identifier(creditsHeld.name)} = ${creditsHeld} - ${param('held')}::numeric
        from finished where ${table.id} = ${param('balanceId')}
        returning ${credits} as balance, finished.credits as amount`,
  );
  const ledger = db.$with('ledger', { id: sql<string>`id` }).as(
    sql`insert into ${creditLedger} (${sql.join(LEDGER_COLUMNS.map((column) => sql.identifier(column.name)), sql`, `)})
        select ${param('ledgerId')}, ${param('institutionId')}, ${shape.account}, ${param('userId')}, -amount, balance, 'conversation.turn', ${param('meta')}::jsonb from charged
        where amount > 0
        returning ${creditLedger.id}`,
  );
  const touched = db.$with('touched', { id: sql<string>`id` }).as(
    shape.touches
      ? sql`update ${conversations} set ${sql.identifier(conversations.lastActivityAt.name)} = greatest(${conversations.lastActivityAt}, ${param('at')}::timestamptz)
          from finished where ${conversations.institutionId} = finished.institution_id and ${conversations.id} = finished.conversation_id
          returning ${conversations.id}`
      : sql`select null::char(24) as id where false`,
  );
  const ctes = shape.charging ? [locked, finished, charged, ledger, touched] : [finished, touched];
  return db
    .with(...ctes)
    .select()
    .from(finished);
}

const LEDGER_COLUMNS = [
  creditLedger.id,
  creditLedger.institutionId,
  creditLedger.account,
  creditLedger.userId,
  creditLedger.delta,
  creditLedger.balanceAfter,
  creditLedger.reason,
  creditLedger.meta,
];

export interface HoldExtension {
  recordId: string;
  version: string;
  account: CreditAccount;
  balanceId: string;
  extra: number;
}

/**
 * Adds `extra` to a streaming record's hold and to its balance's holds, in one statement, while the
 * balance's spendable part covers it; undefined (nothing changed) when it does not or the record moved on.
 */
export async function extendRecordHold(db: Executor, extension: HoldExtension): Promise<{ version: string; heldCredits: number } | undefined> {
  const table = extension.account === 'institution' ? institutions : users;
  const held = db.$with('held', { ok: sql<number>`ok` }).as(
    sql`update ${table} set ${sql.identifier(table.creditsHeld.name)} = ${table.creditsHeld} + ${extension.extra}::numeric
        where ${table.id} = ${extension.balanceId} and ${table.credits} - ${table.creditsHeld} >= ${extension.extra}::numeric
          and exists (select 1 from ${history} where ${history.id} = ${extension.recordId} and ${history.status} = 'streaming' and ${history.updatedAt} = ${extension.version}::timestamptz)
        returning 1 as ok`,
  );
  const [row] = await db
    .with(held)
    .update(history)
    .set({ heldCredits: sql`${history.heldCredits} + ${extension.extra}::numeric`, updatedAt: sql`clock_timestamp()` })
    .where(and(eq(history.id, extension.recordId), sql`exists (select 1 from held)`))
    .returning({ version: historyVersion, heldCredits: history.heldCredits });
  return row;
}
