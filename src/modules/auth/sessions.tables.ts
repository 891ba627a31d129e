// Server-side sessions: every JWT names one, so signing out or deleting it revokes the token at once.
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn } from '../../platform/db/columns.js';

export const sessions = pgTable(
  'sessions',
  {
    id: idColumn(),
    /** The account, or for a visitor session the visitor's id (no foreign key: it names no account). */
    userId: refColumn('user_id').notNull(),
    /** The twin the session was opened in; launch sessions are confined to it. */
    twinId: refColumn('institution_id'),
    /**
     * 'full'; 'launch' (restricted to one twin until the person steps up, behaviour 16); or 'visitor' (an
     * embedded page's visitor of `institution_id`, no account: `user_id` holds the visitor's generated id).
     */
    kind: text('kind', { enum: ['full', 'launch', 'visitor'] }).notNull().default('full'),
    ip: text('ip').notNull().default(''),
    userAgent: text('user_agent').notNull().default(''),
    createdAt: createdAt(),
    expiresAt: timestampColumn('expires_at').notNull(),
    revokedAt: timestampColumn('revoked_at'),
  },
  (t) => [index('sessions_institution_idx').on(t.twinId, t.createdAt), index('sessions_user_idx').on(t.userId)],
);

export type SessionRow = typeof sessions.$inferSelect;
