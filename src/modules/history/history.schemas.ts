// Wire shapes of history records: the list item (no working detail, only its counts and the
// hasRagSearch/ragSearchCount/ragSearchMode trio the spec asks for) and the full record.
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';
import { APPROVAL_DECISIONS, FEEDBACK_RATINGS, FEEDBACK_STATUSES, HISTORY_MODES, HISTORY_STATUSES } from './history.tables.js';

export const retrievalEntrySchema = z
  .object({
    uploadId: z.string(),
    originalname: z.string(),
    chunkText: z.string().describe('the passage; a confidential one is cut to 100 characters plus a suffix'),
    chunkIndex: z.number().int(),
    length: z.number().int(),
    score: z.number(),
    mode: z.string().describe('RAG'),
    confidential: z.boolean(),
  })
  .describe('Retrieval entry (history ragSearch item)');

const toolCallSchema = z.object({
  id: z.string(),
  server: z.string(),
  tool: z.string(),
  arguments: z.unknown(),
  result: z.unknown().optional(),
  status: z.enum(['pending', 'ok', 'error', 'declined']),
  approval: z
    .object({ approvalId: z.string().nullable().optional(), decision: z.enum(APPROVAL_DECISIONS), decidedAt: z.string(), decidedBy: z.string().nullable().optional() })
    .optional()
    .describe('the approval card of a connector that requires one: the decision, when, and who made it (null: its expiry or the turn\'s cancel; approvalId null: an earlier approve_conversation covered the call)'),
  startedAt: z.string().optional(),
  durationMs: z.number().optional(),
});

const subagentSchema = z.object({
  id: z.string(),
  assistantId: z.string().optional(),
  name: z.string(),
  model: z.string().optional(),
  task: z.string(),
  transcript: z.array(z.object({ role: z.string(), content: z.string() })),
  status: z.enum(['complete', 'failed', 'cancelled']),
  steps: z.number().int().describe("the subagent's tool calls plus its answer"),
  failedSteps: z.number().int().describe('tool calls declined, expired, cancelled or failed, plus the answer when the model failed'),
  durationMs: z.number().optional(),
  tokens: z.number().int().optional(),
  credits: z.number().optional(),
});

const memorySchema = z.object({ id: z.string().optional(), key: z.string(), value: z.string(), shared: z.boolean() });

export const feedbackSchema = z.object({
  rating: z.enum(FEEDBACK_RATINGS),
  comment: z.string(),
  created: z.string(),
  updated: z.string(),
});

export const historySummarySchema = z
  .object({
    _id: z.string(),
    conversationId: z.string(),
    user: z.string().describe('id of the person who asked'),
    institution: z.string().describe('id of the twin'),
    assistant: z.object({ _id: z.string(), name: z.string() }).nullable(),
    question: z.string(),
    answer: z.string(),
    status: z.enum(HISTORY_STATUSES),
    mode: z.enum(HISTORY_MODES).describe('chat: a typed turn; voice: an exchange of a real-time voice session'),
    models: z.array(z.string()),
    usage: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int(), reasoningTokens: z.number().int(), totalTokens: z.number().int() }),
    credits: z.number(),
    toolCallCount: z.number().int(),
    subagentCount: z.number().int(),
    memoryCount: z.number().int(),
    hasReasoning: z.boolean(),
    hasRagSearch: z.boolean(),
    ragSearchCount: z.number().int(),
    ragSearchMode: z.string().nullable(),
    detailsExpired: z.boolean(),
    detailsExpiredAt: z.string().nullable(),
    detailsNotice: z.string().nullable().describe('"Details expired after 180 days" once the working detail has expired'),
    feedback: feedbackSchema.pick({ rating: true, comment: true }).nullable(),
    created: z.string(),
    completed: z.string().nullable(),
  })
  .describe('History record as lists show it: no working detail, only its counts');

export const historyDetailSchema = historySummarySchema
  .extend({
    error: z.string().nullable(),
    toolCalls: z.array(toolCallSchema),
    subagents: z.array(subagentSchema),
    ragSearch: z.array(retrievalEntrySchema),
    reasoning: z.string().nullable(),
    memories: z.array(memorySchema),
    guidance: z
      .array(z.object({ text: z.string(), at: z.string() }))
      .describe("what the embedding page sent to steer this answer (POST /api/agent/embed/guide): the page's, never the person's words"),
  })
  .describe('History record with its working detail');

export const adminHistorySchema = historySummarySchema
  .extend({
    userEmail: z.string().nullable(),
    userName: z.string(),
    institutionName: z.string().nullable(),
  })
  .describe('History record in the admin list');

export const historyListQuery = paginationQuery.pick({ page: true, limit: true }).extend({
  conversationId: objectId.optional(),
  /** `streaming`: only the answers still running (a new tab follows them with a resume). */
  status: z.enum(['streaming']).optional(),
});

export const adminHistoryListQuery = paginationQuery.pick({ page: true, limit: true }).extend({
  institutionId: objectId.optional(),
  userId: objectId.optional(),
  conversationId: objectId.optional(),
});

export const feedbackBody = z.object({
  rating: z.enum(FEEDBACK_RATINGS),
  comment: z.string().trim().max(2000).optional(),
});


export const adminFeedbackSchema = z
  .object({
    _id: z.string(),
    history: z.object({ _id: z.string(), conversationId: z.string(), question: z.string(), answer: z.string(), assistantName: z.string() }),
    user: z.string(),
    userEmail: z.string().nullable(),
    userName: z.string(),
    institution: z.string(),
    institutionName: z.string().nullable(),
    rating: z.enum(FEEDBACK_RATINGS),
    comment: z.string(),
    status: z.enum(FEEDBACK_STATUSES),
    adminNote: z.string(),
    created: z.string(),
    updated: z.string(),
  })
  .describe('Feedback on an answer, as admins see it');

/** Admin triage of one feedback row; unknown keys are ignored, an empty body changes nothing. */
export const adminFeedbackUpdateBody = z.object({
  status: z.enum(FEEDBACK_STATUSES).optional(),
  adminNote: z.string().trim().max(2000).optional(),
});

export const adminFeedbackListQuery = paginationQuery.pick({ page: true, limit: true }).extend({
  institutionId: objectId.optional(),
  userId: objectId.optional(),
  rating: z.enum(FEEDBACK_RATINGS).optional(),
});

export function page<T extends z.ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), page: z.number().int(), limit: z.number().int(), total: z.number().int() });
}

export type HistorySummaryWire = z.infer<typeof historySummarySchema>;
export type HistoryDetailWire = z.infer<typeof historyDetailSchema>;
export type AdminHistoryWire = z.infer<typeof adminHistorySchema>;
export type AdminFeedbackWire = z.infer<typeof adminFeedbackSchema>;
export type FeedbackWire = z.infer<typeof feedbackSchema>;
export type RetrievalEntryWire = z.infer<typeof retrievalEntrySchema>;
