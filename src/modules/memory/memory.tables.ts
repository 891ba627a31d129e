// Memory parameters: what a person (personal rows) or a twin (shared rows) wants the assistants to
// remember. Tenant data: a row belongs to one twin (a personal row to the author's twin at creation)
// and every index leads with institution_id. Long-term memory writes personal rows here too.
import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

/** The namespace of rows written by long-term memory extraction. */
export const LONG_TERM_NAMESPACE = 'long-term';
/** The namespace of a row created without one. */
export const DEFAULT_NAMESPACE = 'default';

export const memoryParameters = pgTable(
  'memory_parameters',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    /** The author. */
    userId: refColumn('user_id').notNull(),
    keyName: text('key_name').notNull(),
    keyValue: text('key_value').notNull(),
    keyDescription: text('key_description').notNull().default(''),
    keyNamespace: text('key_namespace').notNull().default(DEFAULT_NAMESPACE),
    /** Shared rows are used for everyone in the twin; personal rows only for their author. */
    shared: boolean('shared').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Deleted by its author (personal-data delete): never listed or recalled again, purged after the grace period. */
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    index('memory_parameters_institution_user_idx').on(t.twinId, t.userId, t.createdAt),
    index('memory_parameters_institution_shared_idx').on(t.twinId, t.createdAt).where(sql`${t.shared}`),
  ],
);

export type MemoryRow = typeof memoryParameters.$inferSelect;
export type NewMemory = typeof memoryParameters.$inferInsert;
