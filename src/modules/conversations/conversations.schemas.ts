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
  z.object({ success: z.literal(true), streamingFailed: z.literal(true) }),
]);
export type QandaAnswer = z.infer<typeof qandaAnswer>;
