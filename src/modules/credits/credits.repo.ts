// Balance changes as single conditional statements: a debit applies only while the balance covers it,
// so concurrent charges can never overdraw (the row lock serialises them; the condition is re-checked).
// What turns in progress hold (credits_held) is not spendable: a debit needs credits - credits_held.
import { and, desc, eq, gte, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { creditLedger, type CreditAccount, type CreditLedgerRow } from './credits.tables.js';

export type NewLedgerRow = typeof creditLedger.$inferInsert;

// The balance rule's SQL pieces, embedded by every statement that changes a balance (here, and a turn's
// opening, extension and settle in conversations/turn-record.repo.ts).

/** The row that holds a balance: the twin's pool, or the person's own credits. */
export function balanceTable(account: CreditAccount): typeof twins | typeof users {
  return account === 'institution' ? twins : users;
}

/** What a balance may still spend: its credits less what turns in progress hold. Never below zero. */
export function spendable(table: typeof twins | typeof users): SQL<number> {
  return sql<number>`(${table.credits} - ${table.creditsHeld})`;
}

/**
 * One UPDATE (for a CTE) that adds `amount` to the balance's holds only while its spendable part covers
 * it, returning one row `ok` when it did. Under the row's lock, racing holds re-check the condition.
 */
export function holdUpdate(account: CreditAccount, balanceId: unknown, amount: unknown, also: SQL = sql`true`): SQL {
  const table = balanceTable(account);
  return sql`update ${table} set ${sql.identifier(table.creditsHeld.name)} = ${table.creditsHeld} + ${amount}::numeric
    where ${table.id} = ${balanceId} and ${spendable(table)} >= ${amount}::numeric and ${also}
    returning 1 as ok`;
}

/** Takes `amount` from the twin's pool; undefined when the twin is missing or the balance is short. */
export async function debitTwin(db: Executor, id: string, amount: number): Promise<number | undefined> {
  const [row] = await db
    .update(twins)
    .set({ credits: sql`${twins.credits} - ${amount}`, creditsUsed: sql`${twins.creditsUsed} + ${amount}` })
    .where(and(eq(twins.id, id), gte(spendable(twins), amount)))
    .returning({ credits: twins.credits });
  return row?.credits;
}

export async function debitUser(db: Executor, id: string, amount: number): Promise<number | undefined> {
  const [row] = await db
    .update(users)
    .set({ credits: sql`${users.credits} - ${amount}`, creditsUsed: sql`${users.creditsUsed} + ${amount}` })
    .where(and(eq(users.id, id), gte(spendable(users), amount)))
    .returning({ credits: users.credits });
  return row?.credits;
}

/** Gives back what a turn held (its settle or its end without one). */
export async function releaseHold(db: Executor, account: CreditAccount, id: string, amount: number): Promise<void> {
  if (amount <= 0) return;
  const table = balanceTable(account);
  await db
    .update(table)
    .set({ creditsHeld: sql`${table.creditsHeld} - ${amount}` })
    .where(eq(table.id, id));
}

/** Adds to the twin's pool; `award` also counts the amount in creditAward (free credits granted). */
export async function creditTwin(db: Executor, id: string, amount: number, award: boolean): Promise<number | undefined> {
  const set: Record<string, SQL> = { credits: sql`${twins.credits} + ${amount}` };
  if (award) set.creditAward = sql`${twins.creditAward} + ${amount}`;
  const [row] = await db.update(twins).set(set).where(eq(twins.id, id)).returning({ credits: twins.credits });
  return row?.credits;
}

export async function creditUser(db: Executor, id: string, amount: number): Promise<number | undefined> {
  const [row] = await db
    .update(users)
    .set({ credits: sql`${users.credits} + ${amount}` })
    .where(eq(users.id, id))
    .returning({ credits: users.credits });
  return row?.credits;
}

/** Sets a person's balance, returning it before and after (the row is locked for the change). */
export async function setUserBalance(db: Executor, id: string, credits: number): Promise<{ before: number; after: number } | undefined> {
  const [before] = await db.select({ credits: users.credits }).from(users).where(eq(users.id, id)).for('update');
  if (!before) return undefined;
  await db.update(users).set({ credits }).where(eq(users.id, id));
  return { before: before.credits, after: credits };
}

export async function readPoolSetting(db: Executor, twinId: string): Promise<{ poolCredits: boolean; status: string } | undefined> {
  const [row] = await db
    .select({ poolCredits: twins.poolCredits, status: twins.status })
    .from(twins)
    .where(eq(twins.id, twinId))
    .limit(1);
  return row;
}

export async function insertLedger(db: Executor, values: NewLedgerRow): Promise<CreditLedgerRow> {
  const [row] = await db.insert(creditLedger).values(values).returning();
  return row;
}

export async function listLedger(
  db: Executor,
  filter: { twinId?: string; userId?: string },
  page: { offset: number; limit: number },
): Promise<{ rows: CreditLedgerRow[]; total: number }> {
  const where = and(
    filter.twinId ? eq(creditLedger.twinId, filter.twinId) : undefined,
    filter.userId ? eq(creditLedger.userId, filter.userId) : undefined,
  );
  const rows = await db.select().from(creditLedger).where(where).orderBy(desc(creditLedger.createdAt), desc(creditLedger.id)).offset(page.offset).limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(creditLedger).where(where);
  return { rows, total: count.total };
}
