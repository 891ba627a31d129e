// Approval cards (behaviour 5): a connector tool call that waits for its person's decision. One row per
// card; the first decision wins (a conditional update), and `approve_conversation` rows are what later
// calls of that tool of that server in the same conversation find instead of asking again.
import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn } from '../../platform/db/columns.js';
import { APPROVAL_DECISIONS, type ApprovalDecision } from '../history/history.tables.js';
import { twins } from '../twins/twins.tables.js';

/** What a person may decide. */
export const PERSON_DECISIONS = ['approve', 'approve_conversation', 'deny'] as const;
export type PersonDecision = (typeof PERSON_DECISIONS)[number];
/** Every way a card ends (the history record's list): a decision, its expiry (counts as deny), or its turn's cancel. */
export const CARD_DECISIONS = APPROVAL_DECISIONS;
export type CardDecision = ApprovalDecision;
/** Who asked: the chat turn itself, a delegated subagent of it, or a real-time voice session. */
export const CARD_ORIGINS = ['chat', 'subagent', 'voice'] as const;

export const toolApprovals = pgTable(
  'tool_approvals',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    userId: refColumn('user_id').notNull(),
    historyId: refColumn('history_id').notNull(),
    conversationId: refColumn('conversation_id').notNull(),
    serverId: refColumn('server_id').notNull(),
    serverName: text('server_name').notNull(),
    tool: text('tool').notNull(),
    arguments: jsonb('arguments').$type<unknown>().notNull().default(sql`'{}'::jsonb`),
    origin: text('origin', { enum: CARD_ORIGINS }).notNull().default('chat'),
    expiresAt: timestampColumn('expires_at').notNull(),
    /** Null while pending. */
    decision: text('decision', { enum: CARD_DECISIONS }),
    decidedBy: refColumn('decided_by'),
    decidedAt: timestampColumn('decided_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('tool_approvals_institution_user_pending_idx').on(t.twinId, t.userId, t.expiresAt).where(sql`${t.decision} is null`),
    index('tool_approvals_institution_conversation_grant_idx')
      .on(t.twinId, t.conversationId, t.serverId, t.tool)
      .where(sql`${t.decision} = 'approve_conversation'`),
  ],
);

export type ToolApprovalRow = typeof toolApprovals.$inferSelect;
