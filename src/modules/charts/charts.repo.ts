// The charts' reads: history records and feedback of some twins within a window, summed per UTC day
// (and per assistant for feedback) in the database, so a chart reads a few dozen rows whatever the volume.
import { and, desc, eq, gt, gte, inArray, lt, sql, type Column } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { history, historyFeedback } from '../history/history.tables.js';

/** null: every twin. */
export type ChartTwins = string[] | null;
interface Window {
  from: Date;
  to: Date;
}

const dayOf = (column: Column) => sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD')`;
const within = (twinColumn: Column, createdColumn: Column, twins: ChartTwins, window: Window) =>
  and(twins ? inArray(twinColumn, twins) : undefined, gte(createdColumn, window.from), lt(createdColumn, window.to));

export async function usagePerDay(db: Executor, twins: ChartTwins, window: Window) {
  const day = dayOf(history.createdAt);
  return db
    .select({
      day,
      turns: sql<number>`count(*)::int`,
      tokens: sql<number>`coalesce(sum(${history.inputTokens} + ${history.outputTokens}), 0)::bigint`.mapWith(Number),
      credits: sql<number>`coalesce(sum(${history.credits}), 0)`.mapWith(Number),
      activePeople: sql<number>`count(distinct ${history.userId})::int`,
    })
    .from(history)
    .where(within(history.twinId, history.createdAt, twins, window))
    .groupBy(day);
}

const ups = sql<number>`count(*) filter (where ${historyFeedback.rating} = 'up')::int`;
const downs = sql<number>`count(*) filter (where ${historyFeedback.rating} = 'down')::int`;

export async function feedbackPerDay(db: Executor, twins: ChartTwins, window: Window) {
  const day = dayOf(historyFeedback.createdAt);
  return db.select({ day, up: ups, down: downs }).from(historyFeedback).where(within(historyFeedback.twinId, historyFeedback.createdAt, twins, window)).groupBy(day);
}

export async function feedbackPerAssistant(db: Executor, twins: ChartTwins, window: Window) {
  return db
    .select({ assistantId: history.assistantId, name: sql<string>`max(${history.assistantName})`, up: ups, down: downs })
    .from(historyFeedback)
    .innerJoin(history, and(eq(history.twinId, historyFeedback.twinId), eq(history.id, historyFeedback.historyId)))
    .where(within(historyFeedback.twinId, historyFeedback.createdAt, twins, window))
    .groupBy(history.assistantId)
    .orderBy(desc(sql`count(*)`), history.assistantId);
}

/** The subagent runs kept on the records of the window (records with at least one). */
export function subagentRuns(db: Executor, twins: ChartTwins, window: Window) {
  return db
    .select({ createdAt: history.createdAt, subagents: history.subagents })
    .from(history)
    .where(and(within(history.twinId, history.createdAt, twins, window), gt(history.subagentCount, 0)));
}
