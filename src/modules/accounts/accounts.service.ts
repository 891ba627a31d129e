// Accounts administration (super admins only): a customer that groups twins. A twin joins one with
// PUT /api/admin/institution/{id} {accountId} (the twins family checks the account exists); deleting an
// account detaches its twins and removes its account-wide entitlements in one transaction.
import { withTransaction, type Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { requireAccess } from '../access/access.js';
import type { AccountRow } from '../twins/accounts.tables.js';
import { deleteAccounts, findAccount, insertAccount, listAccounts, twinsOfAccounts, updateAccount, type AccountTwin, type NewAccount } from './accounts.repo.js';
import type { AccountInput, AccountWire } from './accounts.schemas.js';

const notFound = () => new NotFoundError('Account not found', 'ACCOUNT_NOT_FOUND');

export function presentAccount(row: AccountRow, twins: AccountTwin[]): AccountWire {
  return {
    _id: row.id,
    name: row.name,
    contactEmail: row.contactEmail,
    institutions: twins.filter((twin) => twin.accountId === row.id).map((twin) => ({ _id: twin.id, name: twin.name })),
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}

function toColumns(input: AccountInput): Partial<NewAccount> {
  return { name: input.name, contactEmail: input.contactEmail };
}

export function createAccountsService(db: Database) {
  const manage = (actor: Actor) => requireAccess(db, actor, 'account.manage', {});
  const present = async (row: AccountRow) => presentAccount(row, await twinsOfAccounts(db, [row.id]));

  return {
    async list(actor: Actor, query: { page: number; limit: number; search?: string }) {
      await manage(actor);
      const { rows, total } = await listAccounts(db, query.search, { offset: (query.page - 1) * query.limit, limit: query.limit });
      const twins = await twinsOfAccounts(db, rows.map((row) => row.id));
      return { success: true as const, data: rows.map((row) => presentAccount(row, twins)), page: query.page, limit: query.limit, total };
    },

    async get(actor: Actor, id: string) {
      await manage(actor);
      const row = await findAccount(db, id);
      if (!row) throw notFound();
      return present(row);
    },

    async create(actor: Actor, input: AccountInput & { name: string }) {
      await manage(actor);
      return present(await insertAccount(db, { ...toColumns(input), name: input.name }));
    },

    async edit(actor: Actor, id: string, input: AccountInput) {
      await manage(actor);
      const row = await updateAccount(db, id, toColumns(input));
      if (!row) throw notFound();
      return present(row);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      await manage(actor);
      if ((await withTransaction(db, (tx) => deleteAccounts(tx, [id]))) === 0) throw notFound();
    },

    /** Behaviour 13's shape: unknown ids are skipped; `changed` counts the accounts deleted. */
    async bulkDelete(actor: Actor, ids: string[]): Promise<number> {
      await manage(actor);
      return withTransaction(db, (tx) => deleteAccounts(tx, [...new Set(ids)]));
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
