// `db.analyze`: every minute, the embedded database's planner statistics are brought up to date
// (maintenance.ts). Scheduled on PGlite only: a server's autovacuum does this itself.
import { z } from 'zod';
import type { JobLogger, JobQueue } from '../jobs/queue.js';
import type { DatabaseHandle } from './client.js';
import { analyzeStaleTables } from './maintenance.js';

export const ANALYZE_JOB = 'db.analyze';
export const ANALYZE_CRON = '* * * * *';
const analyzePayload = z.object({});

declare module '../jobs/queue.js' {
  interface Jobs {
    'db.analyze': z.infer<typeof analyzePayload>;
  }
}

export function defineMaintenanceJobs(jobs: JobQueue, database: DatabaseHandle, log?: JobLogger): void {
  jobs.define({
    name: ANALYZE_JOB,
    schema: analyzePayload,
    perform: async () => {
      const analyzed = await analyzeStaleTables(database);
      if (analyzed.length > 0) log?.info({ tables: analyzed }, 'planner statistics refreshed');
    },
    retryLimit: 0,
    expireInSeconds: 10 * 60,
  });
}

export async function scheduleMaintenanceJobs(jobs: JobQueue, database: Pick<DatabaseHandle, 'kind'>): Promise<void> {
  if (database.kind === 'pglite') await jobs.schedule(ANALYZE_JOB, ANALYZE_CRON);
}
