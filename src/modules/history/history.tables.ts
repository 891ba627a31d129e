// Conversations and their history records (one per question and answer), with the working detail
// behind each answer (tool calls, subagents, retrieval entries, reasoning, memories) and the feedback
// people give on answers. Tenant data: every table carries institution_id and its indexes lead with it.
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { amount, createdAt, idColumn, refColumn, stringList, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

export const HISTORY_STATUSES = ['streaming', 'complete', 'cancelled', 'failed'] as const;
export type HistoryStatus = (typeof HISTORY_STATUSES)[number];
export const HISTORY_MODES = ['chat', 'voice'] as const;
/** How an approval card ended: a person's decision, its expiry (counts as deny) or its turn's cancel. */
export const APPROVAL_DECISIONS = ['approve', 'approve_conversation', 'deny', 'expired', 'cancelled'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];
export const FEEDBACK_RATINGS = ['up', 'down'] as const;
export type FeedbackRating = (typeof FEEDBACK_RATINGS)[number];
export const FEEDBACK_STATUSES = ['new', 'reviewed'] as const;
export type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];

/** One connector tool call; `approval` records the decision when the connector requires one (behaviour 5). */
export interface ToolCallEntry {
  id: string;
  server: string;
  tool: string;
  arguments: unknown;
  result?: unknown;
  /** 'pending' while an approval card waits for a decision. */
  status: 'pending' | 'ok' | 'error' | 'declined';
  approval?: { approvalId?: string | null; decision: ApprovalDecision; decidedAt: string; decidedBy?: string | null };
  startedAt?: string;
  durationMs?: number;
}

export interface SubagentMessage {
  role: string;
  content: string;
}

/** A delegated agent's run: its task and transcript are working detail; steps and outcome are kept. */
export interface SubagentEntry {
  id: string;
  assistantId?: string;
  name: string;
  model?: string;
  task: string;
  transcript: SubagentMessage[];
  status: 'complete' | 'failed' | 'cancelled';
  steps: number;
  failedSteps: number;
  durationMs?: number;
  tokens?: number;
  credits?: number;
}

/** The spec's retrieval entry (history `ragSearch` item). */
export interface RetrievalEntry {
  uploadId: string;
  originalname: string;
  chunkText: string;
  chunkIndex: number;
  length: number;
  score: number;
  mode: string;
  confidential: boolean;
}

/** What an embedding page sent to steer a turn (behaviour 14): kept apart from the person's words. */
export interface GuidanceEntry {
  text: string;
  /** ISO 8601: when the page sent it. */
  at: string;
}

/** A memory recalled into the turn's context. */
export interface MemoryEntry {
  id?: string;
  key: string;
  value: string;
  shared: boolean;
}

export const conversations = pgTable(
  'conversations',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    userId: refColumn('user_id').notNull(),
    assistantId: refColumn('assistant_id'),
    title: text('title').notNull().default(''),
    createdAt: createdAt(),
    /** Working detail expires 180 days after this moment (behaviour 4). */
    lastActivityAt: timestampColumn('last_activity_at').notNull().defaultNow(),
  },
  // Found by key (a turn, the retention job's join). The one index leads with the twin, then the person;
  // no index holds last_activity_at, so a turn's touch of its conversation is a HOT update (the table
  // keeps half of each page free for it: migration 0028), writing no index entry.
  (t) => [index('conversations_institution_user_idx').on(t.twinId, t.userId)],
);

export const history = pgTable(
  'history',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    conversationId: refColumn('conversation_id').notNull().references(() => conversations.id),
    userId: refColumn('user_id').notNull(),
    assistantId: refColumn('assistant_id'),
    /** The assistant's name when the turn ran, so the record reads well after the assistant is gone. */
    assistantName: text('assistant_name').notNull().default(''),
    question: text('question').notNull(),
    answer: text('answer').notNull().default(''),
    status: text('status', { enum: HISTORY_STATUSES }).notNull().default('streaming'),
    /** How the exchange was held: a typed turn ('chat') or a real-time voice session ('voice'). */
    mode: text('mode', { enum: HISTORY_MODES }).notNull().default('chat'),
    error: text('error'),
    models: stringList('models'),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    reasoningTokens: integer('reasoning_tokens').notNull().default(0),
    credits: amount('credits'),
    /** What the turn holds from the balance that pays while it streams (0 once settled or released). */
    heldCredits: amount('held_credits'),
    /** Which balance holds it: the person's ('user') or the twin's pool ('institution'). */
    heldAccount: text('held_account', { enum: ['institution', 'user'] }),
    /** The process streaming the answer (service_processes); a streaming record whose process is gone is settled. */
    processId: refColumn('process_id'),
    // Working detail: replaced by the expiry marker 180 days after the conversation.
    toolCalls: jsonb('tool_calls').$type<ToolCallEntry[]>().notNull().default(sql`'[]'::jsonb`),
    subagents: jsonb('subagents').$type<SubagentEntry[]>().notNull().default(sql`'[]'::jsonb`),
    ragSearch: jsonb('rag_search').$type<RetrievalEntry[]>().notNull().default(sql`'[]'::jsonb`),
    reasoning: text('reasoning'),
    memories: jsonb('memories').$type<MemoryEntry[]>().notNull().default(sql`'[]'::jsonb`),
    /** The embedding page's guidance this turn followed (never the person's words). */
    guidance: jsonb('guidance').$type<GuidanceEntry[]>().notNull().default(sql`'[]'::jsonb`),
    // Counts survive expiry.
    toolCallCount: integer('tool_call_count').notNull().default(0),
    subagentCount: integer('subagent_count').notNull().default(0),
    ragSearchCount: integer('rag_search_count').notNull().default(0),
    memoryCount: integer('memory_count').notNull().default(0),
    ragSearchMode: text('rag_search_mode'),
    detailsExpiredAt: timestampColumn('details_expired_at'),
    createdAt: createdAt(),
    completedAt: timestampColumn('completed_at'),
    updatedAt: updatedAt(),
    /** Deleted by its owner or an admin: hidden everywhere, content erased, usage and credits kept. */
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    index('history_institution_user_created_idx').on(t.twinId, t.userId, t.createdAt),
    index('history_institution_conversation_created_idx').on(t.twinId, t.conversationId, t.createdAt),
    index('history_institution_created_idx').on(t.twinId, t.createdAt),
    // The retention job looks only at rows whose detail is still there.
    index('history_unexpired_idx').on(t.twinId, t.conversationId).where(sql`${t.detailsExpiredAt} is null`),
    // The hold sweeper looks only at turns still streaming (a handful at any time).
    index('history_streaming_idx').on(t.twinId, t.createdAt).where(sql`${t.status} = 'streaming'`),
  ],
);

export const historyFeedback = pgTable(
  'history_feedback',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    historyId: refColumn('history_id').notNull().references(() => history.id, { onDelete: 'cascade' }),
    userId: refColumn('user_id').notNull(),
    rating: text('rating', { enum: FEEDBACK_RATINGS }).notNull(),
    comment: text('comment').notNull().default(''),
    /** Admin triage: 'reviewed' once handled; back to 'new' whenever the person rates again. */
    status: text('status', { enum: FEEDBACK_STATUSES }).notNull().default('new'),
    adminNote: text('admin_note').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('history_feedback_institution_history_key').on(t.twinId, t.historyId),
    index('history_feedback_institution_created_idx').on(t.twinId, t.createdAt),
  ],
);

export type ConversationRow = typeof conversations.$inferSelect;
export type HistoryRow = typeof history.$inferSelect;
export type FeedbackRow = typeof historyFeedback.$inferSelect;
