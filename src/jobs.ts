// Every job of the service: defined on each process's queue whatever its role (an API process sends,
// a worker performs), and the cron schedules, written once the queue has started.
import type { DatabaseHandle } from './platform/db/client.js';
import type { JobQueue } from './platform/jobs/queue.js';
import { defineHistoryJobs, scheduleHistoryJobs } from './modules/history/history.jobs.js';

export function defineJobs(deps: { jobs: JobQueue; database: DatabaseHandle }): void {
  defineHistoryJobs(deps.jobs, deps.database.db);
}

/** Schedules live in the database keyed by job name, so every process may write them. */
export async function scheduleJobs(jobs: JobQueue): Promise<void> {
  await scheduleHistoryJobs(jobs);
}
