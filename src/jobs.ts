// Every job of the service: defined on each process's queue whatever its role (an API process sends,
// a worker performs), and the cron schedules, written once the queue has started. Retrieval is set up
// with the files' job (every process searches; every process may ingest).
import type { FastifyBaseLogger } from 'fastify';
import type { DatabaseHandle } from './platform/db/client.js';
import type { JobLogger, JobQueue } from './platform/jobs/queue.js';
import { defineMaintenanceJobs, scheduleMaintenanceJobs } from './platform/db/maintenance.jobs.js';
import { defineHistoryJobs, scheduleHistoryJobs } from './modules/history/history.jobs.js';
import { defineMemoryJobs } from './modules/memory/extraction.js';
import { defineFilesJobs, type FilesDeps } from './modules/files/files.module.js';
import { defineTurnJobs, scheduleTurnJobs, sweepInterruptedTurns } from './modules/conversations/turn-holds.js';
import { definePersonalDataJobs } from './modules/personal-data/personal-data.module.js';
import { schedulePersonalDataJobs } from './modules/personal-data/personal-data.retention.js';
import { defineExpiredRowsJob, scheduleExpiredRowsJob } from './modules/auth/expired-rows.job.js';
import type { Platform } from './platform/platform.js';

export async function defineJobs(
  deps: FilesDeps & Pick<Platform, 'mailer'> & Partial<Pick<Platform, 'liveness' | 'streamLog'>> & { log: JobLogger & Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>; now?: () => Date },
): Promise<void> {
  defineMaintenanceJobs(deps.jobs, deps.database, deps.log);
  await defineFilesJobs(deps, deps.log);
  defineHistoryJobs(deps.jobs, deps.database.db);
  defineMemoryJobs(deps.jobs, deps.database.db, deps.config.model, deps.log);
  defineTurnJobs(deps.jobs, deps.database.db, deps.streamLog);
  // Every process settles the answers of gone processes: at start, then after each of its heartbeats.
  if (deps.liveness) sweepInterruptedTurns(deps.database.db, deps.liveness, deps.log, deps.streamLog);
  definePersonalDataJobs({ db: deps.database.db, jobs: deps.jobs, storage: deps.storage, mailer: deps.mailer, publicUrl: deps.config.publicUrl, now: deps.now });
  defineExpiredRowsJob(deps.jobs, deps.database.db, deps.now);
}

/** Schedules live in the database keyed by job name, so every process may write them. */
export async function scheduleJobs(jobs: JobQueue, database: Pick<DatabaseHandle, 'kind'>): Promise<void> {
  await scheduleMaintenanceJobs(jobs, database);
  await scheduleHistoryJobs(jobs);
  await scheduleTurnJobs(jobs);
  await schedulePersonalDataJobs(jobs);
  await scheduleExpiredRowsJob(jobs);
}
