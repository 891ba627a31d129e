// Assistants: system ones (no owner, no twin), personal ones (owner, no twin) and twin ones (owner and
// twin). Deleting sets status 'deleted'; rows stay so history records keep pointing at them.
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, stringList, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import { REASONING_EFFORTS } from '../../ai/registry.js';

export const ASSISTANT_STATUSES = ['active', 'unpublished', 'deleted'] as const;
export type AssistantStatus = (typeof ASSISTANT_STATUSES)[number];
/** How the model may use tools in a turn of this assistant. */
export const ASSISTANT_TOOL_MODES = ['auto', 'none', 'required'] as const;
export type AssistantToolMode = (typeof ASSISTANT_TOOL_MODES)[number];

export const assistants = pgTable(
  'assistants',
  {
    id: idColumn(),
    /** Twin the assistant belongs to; null for personal and system assistants. */
    twinId: refColumn('institution_id'),
    /** Owner; null for system assistants. Read-only once created. */
    userId: refColumn('user_id'),
    /** Stable key of a seeded system assistant ('new-conversation'), null otherwise. */
    systemKey: text('system_key'),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    instructions: text('instructions').notNull().default(''),
    status: text('status', { enum: ASSISTANT_STATUSES }).notNull().default('active'),
    argument1: text('argument_1').notNull().default(''),
    argument2: text('argument_2').notNull().default(''),
    argument3: text('argument_3').notNull().default(''),
    argument4: text('argument_4').notNull().default(''),
    argument5: text('argument_5').notNull().default(''),
    pictureUrl: text('picture_url').notNull().default(''),
    adminOnly: boolean('admin_only').notNull().default(false),
    editableOthers: boolean('editable_others').notNull().default(false),
    twinShared: boolean('institution_shared').notNull().default(false),
    accountShared: boolean('account_shared').notNull().default(false),
    ragEnabled: boolean('rag_enabled').notNull().default(false),
    bypassSystemContext: boolean('bypass_system_context').notNull().default(false),
    /** Past exchanges sent with a turn; 0 means the caller's own remember_history_count applies. */
    rememberHistory: integer('remember_history').notNull().default(0),
    conversationModel: text('conversation_model').notNull().default(''),
    stsConversationModel: text('sts_conversation_model').notNull().default(''),
    assistantToolMode: text('assistant_tool_mode', { enum: ASSISTANT_TOOL_MODES }).notNull().default('auto'),
    /** The tools this assistant may use (names as in /api/admin/tools); null: every tool the twin enables. */
    tools: jsonb('tools').$type<string[]>(),
    /** Assistants this one may hand a task to through the `delegate` tool (delegated subagents). */
    delegates: stringList('delegates'),
    /** Null: the twin's reasoning effort applies. */
    stsReasoningEffort: text('sts_reasoning_effort', { enum: REASONING_EFFORTS }),
    likedCount: integer('liked_count').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** Set with status 'deleted' by the owner's personal-data delete: the row is purged after the grace period. */
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    index('assistants_institution_status_idx').on(t.twinId, t.status),
    index('assistants_user_idx').on(t.userId),
    uniqueIndex('assistants_system_key_key').on(t.systemKey),
  ],
);

export type AssistantRow = typeof assistants.$inferSelect;
export type NewAssistant = typeof assistants.$inferInsert;
