// Guidance an embedding page sent for one embed session (a visitor's or a launch session), waiting for
// that session's next turn, which takes it (deleting it here) and keeps it on its history record. Tenant data.
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

export const embedGuidance = pgTable(
  'embed_guidance',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    sessionId: refColumn('session_id').notNull(),
    text: text('text').notNull(),
    createdAt: createdAt(),
  },
  // A turn looks only for what waits on its session.
  (t) => [index('embed_guidance_institution_session_idx').on(t.twinId, t.sessionId)],
);

export type EmbedGuidanceRow = typeof embedGuidance.$inferSelect;
