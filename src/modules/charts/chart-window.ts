// The window of a chart: `from` and `to` of the body read as UTC instants, and the days between.
import { BadRequestError } from '../../platform/http/errors.js';
import type { ChartBody } from './charts.schemas.js';

export const CHART_DAYS = 31;
const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

export interface ChartWindow {
  from: Date;
  /** Exclusive. */
  to: Date;
  days: string[];
}

const isDate = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
const rangeError = (message: string, field: string) => new BadRequestError(message, 'INVALID_RANGE', { field, issues: [{ field, message }] });

export function chartWindow(body: Pick<ChartBody, 'from' | 'to'>, now: Date): ChartWindow {
  const to = body.to ? (isDate(body.to) ? new Date(Date.parse(`${body.to}T00:00:00Z`) + DAY_MS) : new Date(body.to)) : now;
  const from = body.from ? new Date(isDate(body.from) ? `${body.from}T00:00:00Z` : body.from) : new Date(to.getTime() - CHART_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw rangeError('from must be before to', 'body.from');
  if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) throw rangeError(`A chart covers at most ${MAX_DAYS} days`, 'body.to');
  return { from, to, days: daysBetween(from, to) };
}

/** The UTC days an instant of [from, to) can fall on. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let at = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); at < to.getTime(); at += DAY_MS) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}
