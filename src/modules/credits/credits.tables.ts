// The credit ledger: one row per change of a balance (a twin's pool or a person's), saying who made
// it, why and by how much, and the balance after it, so every balance can be audited from its history.
import { index, jsonb, numeric, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn } from '../../platform/db/columns.js';

export const CREDIT_ACCOUNTS = ['institution', 'user'] as const;
export type CreditAccount = (typeof CREDIT_ACCOUNTS)[number];

export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: idColumn(),
    /** The twin the change belongs to (null for a person's balance changed outside any twin). */
    twinId: refColumn('institution_id'),
    /** Whose balance changed: the twin's pool, or the person's own credits. */
    account: text('account', { enum: CREDIT_ACCOUNTS }).notNull(),
    /** The person charged or credited (also set for pooled charges: who used them). */
    userId: refColumn('user_id'),
    /** Signed change: negative for a charge, positive for an award. */
    delta: numeric('delta', { precision: 18, scale: 6, mode: 'number' }).notNull(),
    balanceAfter: numeric('balance_after', { precision: 18, scale: 6, mode: 'number' }).notNull(),
    /** Stable reason code, e.g. 'conversation.turn', 'admin.award', 'admin.set'. */
    reason: text('reason').notNull(),
    /** Who made the change (an administrator), null for the system. */
    actorId: refColumn('actor_id'),
    meta: jsonb('meta').$type<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [
    index('credit_ledger_institution_idx').on(t.twinId, t.createdAt),
    index('credit_ledger_user_idx').on(t.userId, t.createdAt),
  ],
);

export type CreditLedgerRow = typeof creditLedger.$inferSelect;
