// Real-time voice sessions: one row per session, so any process can check its one-use token (stored as
// a hash), end it (the row's status, then the bus to the process holding its socket), and the sweep can
// settle one whose process died. The audio is never stored; what a session said lands in `history`.
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { Actor } from '../../platform/http/actor.js';
import { createdAt, idColumn, refColumn, timestampColumn } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

/** open: token issued, socket not yet connected; live: the relay runs; ended: over (endReason says why). */
export const RT_SESSION_STATUSES = ['open', 'live', 'ended'] as const;
export type RtSessionStatus = (typeof RT_SESSION_STATUSES)[number];

export const rtSessions = pgTable(
  'rt_sessions',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    userId: refColumn('user_id').notNull(),
    /** The person's sign-in session: the relay acts as the person who opened it. */
    authSessionId: refColumn('auth_session_id').notNull(),
    /** The person as the session route saw them (twin, role, permissions): the relay's tools run as them. */
    caller: jsonb('caller').$type<Actor>().notNull(),
    assistantId: refColumn('assistant_id'),
    voice: text('voice').notNull(),
    model: text('model').notNull(),
    /** sha256 of the one-use token; cleared once used. */
    tokenHash: text('token_hash'),
    tokenExpiresAt: timestampColumn('token_expires_at').notNull(),
    status: text('status', { enum: RT_SESSION_STATUSES }).notNull().default('open'),
    endReason: text('end_reason'),
    /** The conversation its exchanges are written in, and the record open now (holding credits). */
    conversationId: refColumn('conversation_id'),
    recordId: refColumn('record_id'),
    /** The process that opened it, then the one holding its socket (service_processes). */
    processId: refColumn('process_id'),
    createdAt: createdAt(),
    endedAt: timestampColumn('ended_at'),
  },
  (t) => [index('rt_sessions_token_idx').on(t.tokenHash), index('rt_sessions_status_idx').on(t.status)],
);

export type RtSessionRow = typeof rtSessions.$inferSelect;
