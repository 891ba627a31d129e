// The job `auth.expired-rows` (hourly): deletes the sign-in family's rows that can no longer be used,
// which nothing else removes: sessions revoked or expired, pending two-step sign-ins, password-reset
// links, launch tokens and sign-in-provider states, each once its end is EXPIRED_ROWS_KEEP_DAYS past,
// and embed guidance whose session can no longer take a turn. Until then a late use of a link or token
// still answers "expired" rather than "unknown". Batched and idempotent: a retry or a second worker only
// finds what is still due.
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import type { JobQueue } from '../../platform/jobs/queue.js';

export const EXPIRED_ROWS_JOB = 'auth.expired-rows';
export const EXPIRED_ROWS_CRON = '23 * * * *';
/** How long a dead row stays after its end (expiry, revocation). */
export const EXPIRED_ROWS_KEEP_DAYS = 30;
const DAY_MS = 86_400_000;
const BATCH = 1_000;

export interface ExpiredRowsReport {
  sessions: number;
  mfaChallenges: number;
  passwordResets: number;
  launchTokens: number;
  oauthStates: number;
  guidance: number;
}

/** Each table's rows that are due, as a condition on the row (`cutoff`: the end must be before it). */
function dueRows(cutoff: Date, now: Date): Array<[keyof ExpiredRowsReport, string, SQL]> {
  return [
    ['sessions', 'sessions', sql`expires_at < ${cutoff} or revoked_at < ${cutoff}`],
    ['mfaChallenges', 'mfa_challenges', sql`expires_at < ${cutoff}`],
    ['passwordResets', 'password_resets', sql`expires_at < ${cutoff}`],
    ['launchTokens', 'launch_tokens', sql`expires_at < ${cutoff}`],
    ['oauthStates', 'oauth_states', sql`expires_at < ${cutoff}`],
    // Guidance waits for its session's next turn: a session gone, revoked or expired takes none.
    [
      'guidance',
      'embed_guidance',
      sql`not exists (select 1 from sessions s where s.id = embed_guidance.session_id and s.revoked_at is null and s.expires_at > ${now})`,
    ],
  ];
}

export async function deleteExpiredRows(db: Database, now: Date, signal?: AbortSignal): Promise<ExpiredRowsReport> {
  const cutoff = new Date(now.getTime() - EXPIRED_ROWS_KEEP_DAYS * DAY_MS);
  const report = {} as ExpiredRowsReport;
  for (const [name, table, due] of dueRows(cutoff, now)) {
    report[name] = 0;
    for (;;) {
      signal?.throwIfAborted();
      const deleted = (await db.execute(
        sql`delete from ${sql.identifier(table)} where id in (select id from ${sql.identifier(table)} where ${due} limit ${BATCH}) returning id`,
      )) as unknown as { rows: unknown[] };
      const count = deleted.rows.length;
      report[name] += count;
      if (count < BATCH) break;
    }
  }
  return report;
}

const expiredRowsPayload = z.object({}).strict();

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'auth.expired-rows': z.infer<typeof expiredRowsPayload>;
  }
}

export function defineExpiredRowsJob(jobs: JobQueue, db: Database, now: () => Date = () => new Date()): void {
  jobs.define({
    name: EXPIRED_ROWS_JOB,
    schema: expiredRowsPayload,
    perform: async (_payload, { signal }) => {
      await deleteExpiredRows(db, now(), signal);
    },
    retryLimit: 3,
    retryDelaySeconds: 60,
    expireInSeconds: 60 * 60,
  });
}

export async function scheduleExpiredRowsJob(jobs: JobQueue): Promise<void> {
  await jobs.schedule(EXPIRED_ROWS_JOB, EXPIRED_ROWS_CRON);
}
