// The end of a turn as ONE statement: the record finished, its cost charged to the balance that pays
// (never more than that balance holds), the ledger row written and the conversation touched. One
// statement, so the balance's row lock, which every turn of a person (or of a pooling twin) shares, is
// held only while the server runs it and commits, never across a trip back to this process: with a
// transaction of several statements, turns ending together queued on that lock for as long as the busy
// process took to send each next statement, and held pooled connections while they waited.
import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { preparedOn } from '../../platform/db/prepared.js';
import { newId } from '../../platform/ids/ids.js';
import type { CreditAccount } from '../credits/credits.tables.js';
import { creditLedger } from '../credits/credits.tables.js';
import type { HistoryUpdate } from '../history/history.repo.js';
import { conversations, history, type HistoryRow } from '../history/history.tables.js';
import { institutions } from '../institutions/institutions.tables.js';
import { users } from '../users/users.tables.js';

export interface OneStatementSettle {
  /** The record as read before (readRecordVersion): finished only if still streaming and unchanged since. */
  record: { id: string; version: string };
  /** What the record becomes (finishValues), its credits aside: the statement sets those. */
  values: HistoryUpdate;
  touchesConversation: boolean;
  at: Date;
  /** What the usage costs; 0 charges nothing and locks nothing. */
  cost: number;
  payer: { account: CreditAccount; institutionId: string; userId: string };
  ledgerMeta: Record<string, unknown>;
}

/**
 * A record with its version: updated_at exactly as stored (microseconds; a Date keeps milliseconds).
 * Deleted records too: the engine still records a deleted record's usage. Read on every turn: a
 * prepared query outside transactions.
 */
export async function readRecordVersion(db: Executor, id: string): Promise<{ row: HistoryRow; version: string } | undefined> {
  const prepared = preparedOn(db, 'record_version', (d) => recordVersion(d, sql.placeholder('id')).prepare('record_version'));
  const [found] = prepared ? await prepared.execute({ id }) : await recordVersion(db, id);
  if (!found) return undefined;
  const { version, ...row } = found;
  return { row, version };
}

const recordVersion = (db: Executor, id: unknown) =>
  db
    .select({ ...getTableColumns(history), version: sql<string>`${history.updatedAt}::text` })
    .from(history)
    .where(eq(history.id, id as string))
    .limit(1);

/**
 * Runs the settle; undefined when the record was no longer streaming or changed after it was read (the
 * caller then settles in a transaction that locks it). The charge is least(cost, balance) read under
 * the balance's row lock inside the statement, so racing turns never overdraw it.
 */
export async function finishAndCharge(db: Executor, settle: OneStatementSettle): Promise<{ row: HistoryRow; credits: number } | undefined> {
  const { account, institutionId, userId } = settle.payer;
  const balance = account === 'institution' ? { table: institutions, id: institutionId } : { table: users, id: userId };
  const credits = balance.table.credits;
  const creditsUsed = balance.table.creditsUsed;
  const charging = settle.cost > 0;

  // The paying row, locked (and read as its latest version) for the rest of the statement.
  const locked = db.$with('locked', { balance: sql<number>`balance` }).as(
    sql`select ${credits} as balance from ${balance.table} where ${balance.table.id} = ${balance.id} for update`,
  );
  const charge = charging ? sql`coalesce((select least(${settle.cost}::numeric, greatest(balance, 0)) from locked), 0)` : sql`0`;
  const finished = db.$with('finished').as(
    db
      .update(history)
      .set({ ...settle.values, credits: charge })
      .where(and(eq(history.id, settle.record.id), eq(history.status, 'streaming'), sql`${history.updatedAt} = ${settle.record.version}::timestamptz`))
      .returning(),
  );
  const charged = db.$with('charged', { balance: sql<number>`balance`, amount: sql<number>`amount` }).as(
    sql`update ${balance.table} set ${sql.identifier(credits.name)} = ${credits} - finished.credits, ${sql.identifier(creditsUsed.name)} = ${creditsUsed} + finished.credits
        from finished where ${balance.table.id} = ${balance.id} and finished.credits > 0
        returning ${credits} as balance, finished.credits as amount`,
  );
  const ledger = db.$with('ledger', { id: sql<string>`id` }).as(
    sql`insert into ${creditLedger} (${sql.join(LEDGER_COLUMNS.map((column) => sql.identifier(column.name)), sql`, `)})
        select ${newId()}, ${institutionId}, ${account}, ${userId}, -amount, balance, 'conversation.turn', ${JSON.stringify(settle.ledgerMeta)}::jsonb from charged
        returning ${creditLedger.id}`,
  );
  const touched = db.$with('touched', { id: sql<string>`id` }).as(
    settle.touchesConversation
      ? sql`update ${conversations} set ${sql.identifier(conversations.lastActivityAt.name)} = greatest(${conversations.lastActivityAt}, ${settle.at.toISOString()}::timestamptz)
          from finished where ${conversations.institutionId} = finished.institution_id and ${conversations.id} = finished.conversation_id
          returning ${conversations.id}`
      : sql`select null::char(24) as id where false`,
  );
  const ctes = charging ? [locked, finished, charged, ledger, touched] : [finished, touched];
  const [row] = await db
    .with(...ctes)
    .select()
    .from(finished);
  if (!row) return undefined;
  return { row: row as HistoryRow, credits: row.credits };
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
