// The subagent-efficiency chart: how delegated subagents did within a chart's window (the last 31 days
// unless asked), read from the subagent runs kept on history records. Per subagent: runs, steps, failed steps, success rate
// (1 - failed steps / steps), the median run time, tokens and credits, and its daily series.
import { z } from 'zod';
import type { Executor } from '../../platform/db/client.js';
import type { SubagentEntry } from '../history/history.tables.js';
import type { ChartWindow } from './chart-window.js';
import { subagentRuns, type ChartTwins } from './charts.repo.js';

const day = z.object({ date: z.string().describe('YYYY-MM-DD (UTC)'), runs: z.number().int(), steps: z.number().int(), failedSteps: z.number().int() });
export const subagentChartAnswer = z.object({
  success: z.literal(true),
  from: z.string(),
  to: z.string(),
  data: z.array(
    z.object({
      assistantId: z.string(),
      name: z.string(),
      runs: z.number().int(),
      steps: z.number().int(),
      failedSteps: z.number().int(),
      successRate: z.number().describe('1 - failedSteps / steps; 1 with no steps'),
      medianDurationMs: z.number(),
      tokens: z.number().int(),
      credits: z.number(),
      daily: z.array(day),
    }),
  ),
  series: z.array(day).describe('every subagent together, one entry per day of the window (days without runs included)'),
});
export type SubagentChart = z.infer<typeof subagentChartAnswer>;
type Day = z.infer<typeof day>;

/** Runs, steps and outcome per subagent over the window, for the twins given (null: every twin). */
export async function subagentEfficiency(db: Executor, twins: ChartTwins, window: ChartWindow): Promise<SubagentChart> {
  const { from, to, days: dates } = window;
  if (twins && twins.length === 0) return { success: true, from: from.toISOString(), to: to.toISOString(), data: [], series: dates.map(emptyDay) };
  const rows = await subagentRuns(db, twins, window);
  const bySubagent = new Map<string, { name: string; runs: SubagentEntry[]; daily: Map<string, Day> }>();
  const series = new Map(dates.map((date) => [date, emptyDay(date)]));
  for (const row of rows) {
    const date = row.createdAt.toISOString().slice(0, 10);
    for (const run of row.subagents) {
      const key = run.assistantId ?? run.name;
      let entry = bySubagent.get(key);
      if (!entry) bySubagent.set(key, (entry = { name: run.name, runs: [], daily: new Map(dates.map((d) => [d, emptyDay(d)])) }));
      entry.runs.push(run);
      for (const target of [entry.daily.get(date), series.get(date)]) {
        if (!target) continue;
        target.runs += 1;
        target.steps += run.steps;
        target.failedSteps += run.failedSteps;
      }
    }
  }
  const data = [...bySubagent.entries()].map(([assistantId, entry]) => {
    const steps = sum(entry.runs, (run) => run.steps);
    const failedSteps = sum(entry.runs, (run) => run.failedSteps);
    return {
      assistantId,
      name: entry.name,
      runs: entry.runs.length,
      steps,
      failedSteps,
      successRate: steps === 0 ? 1 : round((steps - failedSteps) / steps, 4),
      medianDurationMs: median(entry.runs.map((run) => run.durationMs ?? 0)),
      tokens: sum(entry.runs, (run) => run.tokens ?? 0),
      credits: round(sum(entry.runs, (run) => run.credits ?? 0), 6),
      daily: [...entry.daily.values()],
    };
  });
  data.sort((a, b) => b.runs - a.runs || a.name.localeCompare(b.name));
  return { success: true, from: from.toISOString(), to: to.toISOString(), data, series: [...series.values()] };
}

const emptyDay = (date: string): Day => ({ date, runs: 0, steps: 0, failedSteps: 0 });
const sum = <T>(items: readonly T[], of: (item: T) => number) => items.reduce((total, item) => total + of(item), 0);
const round = (value: number, digits: number) => Number(value.toFixed(digits));

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
