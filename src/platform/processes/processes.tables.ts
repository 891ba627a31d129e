// The service's running processes, each with the moment it was last heard from: a process not heard
// from for WORKER_TIMEOUT_SECONDS is gone, and what it held (job attempts, streaming answers) is taken back.
import { char, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampColumn } from '../db/columns.js';

export const serviceProcesses = pgTable('service_processes', {
  id: char('id', { length: 24 }).primaryKey(),
  /** all, api or worker (main.ts); informative. */
  role: text('role').notNull(),
  startedAt: timestampColumn('started_at').notNull().defaultNow(),
  seenAt: timestampColumn('seen_at').notNull().defaultNow(),
});
