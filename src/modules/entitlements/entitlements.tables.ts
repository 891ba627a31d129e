// Entitlements: what a twin (or every twin of an account) may use: models, tools, features and caps.
// Written by super admins; a twin's administrators may read those that apply to their twins.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn, updatedAt } from '../../platform/db/columns.js';

export interface EntitlementCaps {
  /** Conversation turns per 24 hours for the whole twin. */
  dailyTurns?: number | null;
  /** Conversation turns per 24 hours per person. */
  userDailyTurns?: number | null;
  maxFiles?: number | null;
  maxCompletionTokens?: number | null;
  monthlyCredits?: number | null;
}

export const entitlements = pgTable(
  'entitlements',
  {
    id: idColumn(),
    /** The twin it applies to; null when it applies to every twin of `accountId`. */
    twinId: refColumn('institution_id'),
    accountId: refColumn('account_id'),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    status: text('status', { enum: ['active', 'inactive'] }).notNull().default('active'),
    models: jsonb('models').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    tools: jsonb('tools').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    features: jsonb('features').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    caps: jsonb('caps').$type<EntitlementCaps>().notNull().default(sql`'{}'::jsonb`),
    createdBy: refColumn('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    expiresAt: timestampColumn('expires_at'),
  },
  (t) => [index('entitlements_institution_idx').on(t.twinId, t.createdAt), index('entitlements_account_idx').on(t.accountId)],
);

export type EntitlementRow = typeof entitlements.$inferSelect;
