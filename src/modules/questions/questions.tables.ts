// Suggested questions of a twin: shown on its chat start screen and in its public branding, in
// `position` order. One may name the assistant it is meant for (null: any). Tenant data.
import { index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, updatedAt } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

export const questions = pgTable(
  'questions',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    assistantId: refColumn('assistant_id'),
    text: text('text').notNull(),
    /** The wire's `order`: smaller first, then oldest first. */
    position: integer('position').notNull().default(0),
    createdBy: refColumn('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('questions_institution_position_idx').on(t.twinId, t.position, t.createdAt)],
);

export type QuestionRow = typeof questions.$inferSelect;
