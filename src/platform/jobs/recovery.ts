// Taking back the jobs of a gone process. pg-boss 10 knows no worker, so each perform writes its
// attempt into job_attempts (queue.ts); after each liveness beat a working process claims the attempts
// of gone processes (and active jobs with no attempt row that started more than the timeout ago: a
// worker that died between pg-boss's fetch and its row, or an embedded process that writes none), fails them through pg-boss (a retry, or failed
// when the retries are spent), lets a retry start at once, and tells the job kind of a job failed for
// good so it can undo what the attempt left visible. A claim is one statement, so two processes never
// take back the same attempt.
import type PgBoss from 'pg-boss';
import type { DatabaseHandle } from '../db/client.js';
import { processGoneSql } from '../processes/liveness.js';

export const ABANDONED_MESSAGE = 'the process running the job stopped (crash or kill) before it ended';

interface Claimed {
  id: string;
  name: string;
}

export interface RecoveredJob {
  id: string;
  name: string;
  data: unknown;
  /** retry: runs again at once; failed: no retries left. */
  state: 'retry' | 'failed';
  /** The attempt that was abandoned (1 = the first). */
  attempt: number;
}

export interface RecoveryOptions {
  processId: string;
  timeoutSeconds: number;
  /** Claim active jobs without an attempt row that started this many seconds ago (0 at an exclusive start). */
  rowlessAfterSeconds: number;
}

/** Claims, fails and reschedules the abandoned jobs; answers them as they are after the fail. */
export async function recoverAbandonedJobs(database: DatabaseHandle, boss: PgBoss, options: RecoveryOptions): Promise<RecoveredJob[]> {
  const claimed = await claimAbandoned(database, options);
  if (claimed.length === 0) return [];
  const byName = new Map<string, string[]>();
  for (const job of claimed) byName.set(job.name, [...(byName.get(job.name) ?? []), job.id]);
  const recovered: RecoveredJob[] = [];
  for (const [name, ids] of byName) {
    for (const id of ids) await boss.fail(name, id, { message: ABANDONED_MESSAGE });
    // The retry delay is for a failing upstream; a crash is no reason to wait.
    await database.executeSql(`update pgboss.job set start_after = now() where name = $1 and id = any($2::uuid[]) and state = 'retry'`, [name, ids]);
    const { rows } = await database.executeSql(
      `select id, name, data, state::text as state, retry_count from pgboss.job where name = $1 and id = any($2::uuid[]) and state in ('retry', 'failed')`,
      [name, ids],
    );
    for (const row of rows as Array<{ id: string; name: string; data: unknown; state: 'retry' | 'failed'; retry_count: number }>) {
      recovered.push({ id: row.id, name: row.name, data: row.data, state: row.state, attempt: Number(row.retry_count) + 1 });
    }
  }
  return recovered;
}

async function claimAbandoned(database: DatabaseHandle, { processId, timeoutSeconds, rowlessAfterSeconds }: RecoveryOptions): Promise<Claimed[]> {
  // Rows of gone processes whose job is no longer active (it ended, or pg-boss expired it) are only clutter,
  // as are taken-back rows no attempt claimed within a day (their job failed for good).
  await database.executeSql(
    `delete from job_attempts a
      where (a.process_id is not null and a.process_id <> $1 and ${processGoneSql('a.process_id', '$2')}
             and not exists (select 1 from pgboss.job j where j.name = a.job_name and j.id = a.job_id and j.state = 'active'))
         or (a.process_id is null and a.started_at < now() - interval '1 day')`,
    [processId, timeoutSeconds],
  );
  const { rows: ofGone } = await database.executeSql(
    `update job_attempts a set process_id = null, started_at = now()
      where a.process_id is not null and a.process_id <> $1 and ${processGoneSql('a.process_id', '$2')}
        and exists (select 1 from pgboss.job j where j.name = a.job_name and j.id = a.job_id and j.state = 'active')
      returning a.job_id as id, a.job_name as name`,
    [processId, timeoutSeconds],
  );
  // Rowless also means: only the row of an earlier taken-back attempt (process null, older than the
  // job's current start), left when the retry's process died before recording itself, or never records
  // (PGlite). Its update is conditional again on the locked row, so two processes never both claim it.
  const { rows: rowless } = await database.executeSql(
    `insert into job_attempts (job_id, job_name, process_id)
     select j.id, j.name, null from pgboss.job j
      where j.state = 'active' and j.started_on <= now() - $1 * interval '1 second'
        and not exists (select 1 from job_attempts a where a.job_id = j.id and (a.process_id is not null or a.started_at >= j.started_on))
     on conflict (job_id) do update set started_at = now()
      where job_attempts.process_id is null
        and job_attempts.started_at < (select j.started_on from pgboss.job j where j.id = job_attempts.job_id and j.name = job_attempts.job_name)
     returning job_id as id, job_name as name`,
    [rowlessAfterSeconds],
  );
  return [...(ofGone as Claimed[]), ...(rowless as Claimed[])];
}

/**
 * Records that this process runs the attempt (the next attempt of a taken-back job takes its row over).
 * Committed without waiting for the WAL flush (a transaction-local setting, in the statement): a row a
 * crash loses leaves an active job without a row, which recovery takes back after the same timeout.
 */
export async function recordAttempt(database: DatabaseHandle, jobId: string, name: string, processId: string): Promise<void> {
  await database.executeSql(
    `with quick as (select set_config('synchronous_commit', 'off', true))
     insert into job_attempts (job_id, job_name, process_id) select $1, $2, $3 from quick
     on conflict (job_id) do update set process_id = excluded.process_id, started_at = now()`,
    [jobId, name, processId],
  );
}

/** Removes the attempt's row, the same way (a row a crash keeps is of a gone process: cleared by recovery). */
export async function forgetAttempt(database: DatabaseHandle, jobId: string, processId: string): Promise<void> {
  await database.executeSql(
    `with quick as (select set_config('synchronous_commit', 'off', true))
     delete from job_attempts where job_id = $1 and process_id = $2 and exists (select 1 from quick)`,
    [jobId, processId],
  );
}

/** The job ids this process still holds (one taken back from it is missing: it was not heard from in time). */
export async function heldAttempts(database: DatabaseHandle, processId: string): Promise<Set<string>> {
  const { rows } = await database.executeSql(`select job_id from job_attempts where process_id = $1`, [processId]);
  return new Set((rows as Array<{ job_id: string }>).map((row) => row.job_id));
}
