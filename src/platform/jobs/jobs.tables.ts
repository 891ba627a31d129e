// Which process runs each active job (pg-boss 10 does not record it): the row is written when a
// perform begins and removed when it ends. An attempt whose process is gone is taken back (recovery.ts);
// a taken-back row keeps the job id with no process until the next attempt claims it.
import { char, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampColumn } from '../db/columns.js';

export const jobAttempts = pgTable(
  'job_attempts',
  {
    jobId: uuid('job_id').primaryKey(),
    jobName: text('job_name').notNull(),
    /** The process running the attempt; null once taken back from a gone process. */
    processId: char('process_id', { length: 24 }),
    startedAt: timestampColumn('started_at').notNull().defaultNow(),
  },
  (table) => [index('job_attempts_process_idx').on(table.processId)],
);
