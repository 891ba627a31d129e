// Wire shapes of the admin charts (POST /api/admin/histories/charts/<name>): one body for all of them.
import { z } from 'zod';
import { objectId } from '../../platform/http/schemas.js';

/** An ISO 8601 date (a whole UTC day) or date-time. */
const moment = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

export const chartBody = z.object({
  institution: objectId.optional().describe('one twin of the scope; omitted: all of it'),
  from: moment.optional().describe('ISO 8601 date or date-time; a date starts at 00:00 UTC. Default: 31 days before `to`'),
  to: moment.optional().describe('ISO 8601 date or date-time; a date includes that whole UTC day. Default: now. At most 366 days after `from`'),
});
export type ChartBody = z.infer<typeof chartBody>;

export const usageChartAnswer = z.object({
  success: z.literal(true),
  from: z.string(),
  to: z.string(),
  days: z.array(
    z.object({
      day: z.string().describe('YYYY-MM-DD (UTC); every day of the window, days without turns included'),
      turns: z.number().int().describe('conversation turns (history records, deleted ones included: their usage stays)'),
      tokens: z.number().int().describe('input plus output tokens'),
      credits: z.number(),
      activePeople: z.number().int().describe('distinct people who had at least one turn that day'),
    }),
  ),
});
export type UsageChart = z.infer<typeof usageChartAnswer>;

export const feedbackChartAnswer = z.object({
  success: z.literal(true),
  from: z.string(),
  to: z.string(),
  days: z.array(z.object({ day: z.string().describe('YYYY-MM-DD (UTC), every day of the window'), up: z.number().int(), down: z.number().int() })),
  assistants: z
    .array(z.object({ assistantId: z.string().nullable(), name: z.string(), up: z.number().int(), down: z.number().int() }))
    .describe('per assistant of the rated answers, most ratings first; assistantId null for an answer without one'),
});
export type FeedbackChart = z.infer<typeof feedbackChartAnswer>;
