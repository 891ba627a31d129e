// POST /api/admin/histories/charts/<name>: usage, feedback and subagent-efficiency.
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { chartBody, feedbackChartAnswer, usageChartAnswer } from './charts.schemas.js';
import type { ChartsService } from './charts.service.js';
import { subagentChartAnswer } from './subagent-chart.js';

const tags = ['admin: charts'];
const SCOPE =
  'Every chart needs charts.view (a twin administrator holds it in their twin, a super admin everywhere; a plain user gets ' +
  '403 Not authorized) and sums the twins where the caller holds it, or one of them (`institution`; a twin outside the ' +
  'scope gives an empty chart). The window is `from`..`to` (ISO 8601 dates or date-times, UTC days; the last 31 days by ' +
  'default, at most 366; `from` not before `to`: 400 INVALID_RANGE). Days without activity are listed with zeros. ';

export function chartRoutes(app: App, service: ChartsService): void {
  app.post(
    '/api/admin/histories/charts/usage',
    {
      schema: {
        tags,
        summary: 'Usage per day: turns, tokens, credits, active people',
        description: SCOPE + 'Deleted conversation records still count: their usage and credits are kept.',
        body: chartBody,
        response: { 200: usageChartAnswer, ...failures(400, 401, 403) },
      },
    },
    async (request) => service.usage(actorOf(request), request.body),
  );

  app.post(
    '/api/admin/histories/charts/feedback',
    {
      schema: {
        tags,
        summary: 'Feedback per day and per assistant: up and down',
        description: SCOPE + "A rating counts on the day it was first given, for the assistant of the rated answer.",
        body: chartBody,
        response: { 200: feedbackChartAnswer, ...failures(400, 401, 403) },
      },
    },
    async (request) => service.feedback(actorOf(request), request.body),
  );

  app.post(
    '/api/admin/histories/charts/subagent-efficiency',
    {
      schema: {
        tags,
        summary: 'Subagent efficiency per delegated subagent',
        description:
          SCOPE +
          'Per delegated subagent (an assistant another one handed tasks to through the delegate tool): runs, steps (its tool ' +
          'calls plus its answer), failedSteps (calls declined, expired, cancelled or failed, and the answer when its model ' +
          'failed), successRate, medianDurationMs, tokens, credits and a daily series; `series` sums every subagent per day.',
        body: chartBody,
        response: { 200: subagentChartAnswer, ...failures(400, 401, 403) },
      },
    },
    async (request) => service.subagentEfficiency(actorOf(request), request.body),
  );
}
