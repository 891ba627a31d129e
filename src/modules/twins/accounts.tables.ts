// Accounts: a customer that groups several twins, for account-shared assistants and account-wide
// entitlements. A twin names its account in `institutions.account_id`; the account family
// (modules/accounts) administers the rows. The table lives here, beside the twins that point at it,
// so the twins family can check an account exists without importing the family above it.
import { pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, updatedAt } from '../../platform/db/columns.js';

export const accounts = pgTable('accounts', {
  id: idColumn(),
  name: text('name').notNull(),
  contactEmail: text('contact_email').notNull().default(''),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export type AccountRow = typeof accounts.$inferSelect;
