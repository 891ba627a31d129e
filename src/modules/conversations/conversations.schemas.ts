// Request and response schemas of the two Q&A routes (spec: Question and answer over Socket.IO / SSE).
import { z } from 'zod';

const selectedCourse = z.object({ course_id: z.string(), course_name: z.string() });
const inputs = z.array(z.string()).min(1, 'inputs must hold at least the question').max(100);

export const qandaBody = z.object({
  inputs,
  requestArgs: z
    .object({
      socketId: z.string().max(200).optional(),
      assistantId: z.string().max(100).optional(),
      /** Continue this conversation (the caller's own, in this twin); otherwise a new one starts. */
      conversationId: z.string().max(100).optional(),
      selectedCourse: selectedCourse.optional(),
    })
    .optional(),
});
export type QandaBody = z.infer<typeof qandaBody>;

export const qandaStreamBody = z.object({
  inputs,
  requestArgs: z
    .object({
      assistant_id: z.string().max(100).optional(),
      conversationId: z.string().max(100).optional(),
      selectedCourse: selectedCourse.optional(),
      ragOnly: z.boolean().default(false),
      /** Closing the request leaves the answer running RESUME_GRACE_SECONDS for a resume (contract: resumable answers). */
      resumable: z.boolean().optional(),
    })
    .optional(),
});
export type QandaStreamBody = z.infer<typeof qandaStreamBody>;

export const usageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() });

export const qandaAnswer = z.union([
  z.object({
    success: z.literal(true),
    answer: z.string(),
    outputs: z.array(z.string()),
    usage: usageSchema,
    credits: z.number(),
    historyId: z.string(),
    conversationId: z.string(),
    cancelled: z.boolean(),
  }),
  /** historyId: the answer runs anyway; the client follows it with a resume (absent for a visitor, whose turn does not run). */
  z.object({ success: z.literal(true), streamingFailed: z.literal(true), historyId: z.string().optional() }),
]);
export type QandaAnswer = z.infer<typeof qandaAnswer>;
