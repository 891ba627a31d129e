// The history jobs: `history.retention`, run daily at 03:17 UTC, expires working detail (behaviour 4).
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { expireWorkingDetail } from './history.retention.js';

export const RETENTION_JOB = 'history.retention';
export const RETENTION_CRON = '17 3 * * *';
const DEFAULT_BATCH = 500;

const retentionPayload = z.object({ batchSize: z.number().int().min(1).max(10_000).optional() });

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'history.retention': z.infer<typeof retentionPayload>;
  }
}

export function defineHistoryJobs(jobs: JobQueue, db: Database): void {
  jobs.define({
    name: RETENTION_JOB,
    schema: retentionPayload,
    // Idempotent by design: a retry or a second worker only finds what is still due.
    perform: async (payload, { signal }) => {
      await expireWorkingDetail(db, new Date(), payload.batchSize ?? DEFAULT_BATCH, signal);
    },
    retryLimit: 3,
    retryDelaySeconds: 60,
    expireInSeconds: 60 * 60,
  });
}

export async function scheduleHistoryJobs(jobs: JobQueue): Promise<void> {
  await jobs.schedule(RETENTION_JOB, RETENTION_CRON);
}
