// Data access for accounts and the twins that joined them. Deleting an account detaches its twins and
// removes the entitlements given to it, in the caller's transaction.
import { and, asc, desc, eq, ilike, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { entitlements } from '../entitlements/entitlements.tables.js';
import { accounts, type AccountRow } from '../twins/accounts.tables.js';
import { twins } from '../twins/twins.tables.js';

export type NewAccount = typeof accounts.$inferInsert;
export interface AccountTwin {
  accountId: string;
  id: string;
  name: string;
}

const like = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listAccounts(db: Executor, search: string | undefined, page: { offset: number; limit: number }) {
  const where = search ? or(ilike(accounts.name, like(search)), ilike(accounts.contactEmail, like(search))) : undefined;
  const rows = await db.select().from(accounts).where(where).orderBy(desc(accounts.createdAt), desc(accounts.id)).offset(page.offset).limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(accounts).where(where);
  return { rows, total: count.total };
}

/** The live twins of these accounts, by name. */
export async function twinsOfAccounts(db: Executor, accountIds: string[]): Promise<AccountTwin[]> {
  if (accountIds.length === 0) return [];
  const rows = await db
    .select({ accountId: twins.accountId, id: twins.id, name: twins.name })
    .from(twins)
    .where(and(inArray(twins.accountId, accountIds), isNull(twins.deletedAt)))
    .orderBy(asc(twins.name));
  return rows.map((row) => ({ accountId: row.accountId!, id: row.id, name: row.name }));
}

export async function findAccount(db: Executor, id: string): Promise<AccountRow | undefined> {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
  return row;
}

export async function insertAccount(db: Executor, values: NewAccount): Promise<AccountRow> {
  const [row] = await db.insert(accounts).values(values).returning();
  return row;
}

export async function updateAccount(db: Executor, id: string, values: Partial<NewAccount>): Promise<AccountRow | undefined> {
  if (!setsSomething(values)) return findAccount(db, id);
  const [row] = await db.update(accounts).set(values).where(eq(accounts.id, id)).returning();
  return row;
}

/** Deletes the accounts, detaches their twins (deleted ones too) and removes their entitlements; answers how many accounts went. */
export async function deleteAccounts(db: Executor, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  await db.update(twins).set({ accountId: null }).where(inArray(twins.accountId, ids));
  await db.delete(entitlements).where(inArray(entitlements.accountId, ids));
  const rows = await db.delete(accounts).where(inArray(accounts.id, ids)).returning({ id: accounts.id });
  return rows.length;
}
