// The admin charts: usage (turns, tokens, credits, active people per day), feedback (up and down per
// day and per assistant) and subagent efficiency. One permission for all of them, charts.view, over the
// twins where the caller holds it (a super admin: every twin), or one of them; a twin outside that
// scope gives an empty chart, never another twin's figures.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { requireAccess } from '../access/access.js';
import { chartWindow, type ChartWindow } from './chart-window.js';
import { feedbackPerAssistant, feedbackPerDay, usagePerDay, type ChartTwins } from './charts.repo.js';
import type { ChartBody, FeedbackChart, UsageChart } from './charts.schemas.js';
import { subagentEfficiency, type SubagentChart } from './subagent-chart.js';

const round = (value: number) => Number(value.toFixed(6));

export function createChartsService(db: Database, now: () => Date = () => new Date()) {
  /** The twins a chart sums and its window; 403 without charts.view anywhere. */
  async function scope(actor: Actor, body: ChartBody): Promise<{ twins: ChartTwins; window: ChartWindow }> {
    const allowed = await requireAccess(db, actor, 'history.admin', { permission: 'charts.view' });
    const window = chartWindow(body, now());
    if (body.institution) return { twins: allowed === 'all' || allowed.includes(body.institution) ? [body.institution] : [], window };
    return { twins: allowed === 'all' ? null : [...allowed], window };
  }

  const span = (window: ChartWindow) => ({ from: window.from.toISOString(), to: window.to.toISOString() });

  return {
    async usage(actor: Actor, body: ChartBody): Promise<UsageChart> {
      const { twins, window } = await scope(actor, body);
      const rows = twins && twins.length === 0 ? [] : await usagePerDay(db, twins, window);
      const byDay = new Map(rows.map((row) => [row.day, row]));
      const days = window.days.map((day) => {
        const row = byDay.get(day);
        return { day, turns: row?.turns ?? 0, tokens: row?.tokens ?? 0, credits: round(row?.credits ?? 0), activePeople: row?.activePeople ?? 0 };
      });
      return { success: true, ...span(window), days };
    },

    async feedback(actor: Actor, body: ChartBody): Promise<FeedbackChart> {
      const { twins, window } = await scope(actor, body);
      const none = twins && twins.length === 0;
      const [perDay, perAssistant] = none ? [[], []] : await Promise.all([feedbackPerDay(db, twins, window), feedbackPerAssistant(db, twins, window)]);
      const byDay = new Map(perDay.map((row) => [row.day, row]));
      return {
        success: true,
        ...span(window),
        days: window.days.map((day) => ({ day, up: byDay.get(day)?.up ?? 0, down: byDay.get(day)?.down ?? 0 })),
        assistants: perAssistant.map((row) => ({ assistantId: row.assistantId, name: row.name || 'Unknown assistant', up: row.up, down: row.down })),
      };
    },

    async subagentEfficiency(actor: Actor, body: ChartBody): Promise<SubagentChart> {
      const { twins, window } = await scope(actor, body);
      return subagentEfficiency(db, twins, window);
    },
  };
}

export type ChartsService = ReturnType<typeof createChartsService>;
