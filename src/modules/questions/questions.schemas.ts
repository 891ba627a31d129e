// Wire shapes of a twin's suggested questions.
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';

export const questionSchema = z.object({
  _id: z.string(),
  institution: z.string().describe("the twin whose start screen shows it"),
  text: z.string(),
  assistantId: z.string().nullable().describe('the assistant it is meant for; null: any'),
  order: z.number().int().describe('smaller first; equal ones oldest first'),
  created: z.string(),
  updated: z.string(),
});
export type QuestionWire = z.infer<typeof questionSchema>;

const text = z.string().trim().min(1, 'must not be empty').max(500);
const order = z.number().int().min(-1_000_000).max(1_000_000);

export const createQuestionBody = z.object({
  text,
  assistantId: objectId.nullable().optional().describe("one of the twin's assistants or a system assistant; null or absent: any"),
  order: order.optional().describe('0 when absent'),
  institution: objectId.optional().describe("the twin (the caller's current twin when absent)"),
});
export const editQuestionBody = z.object({ text: text.optional(), assistantId: createQuestionBody.shape.assistantId, order: order.optional() });
export type QuestionInput = z.infer<typeof editQuestionBody>;

export const listQuestionsQuery = paginationQuery.extend({
  institution: objectId.optional().describe('one twin of the scope; absent: every twin the caller may list'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
export const questionResult = z.object({ success: z.literal(true), data: questionSchema });
export const questionList = z.object({ success: z.literal(true), data: z.array(questionSchema), page: z.number(), limit: z.number(), total: z.number() });

/** What people see: the current twin's questions in order. */
export const userQuestionSchema = z.object({ _id: z.string(), text: z.string(), assistantId: z.string().nullable(), order: z.number().int() });
export const userQuestionList = z.object({ success: z.literal(true), data: z.array(userQuestionSchema) });
