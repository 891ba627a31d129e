// Wires the personal-data family: a person's counts, export and scoped delete (routes), and its two
// jobs (the export, and the hourly retention), defined by src/jobs.ts with the others on every process.
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Database } from '../../platform/db/client.js';
import type { App } from '../../platform/http/schemas.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import type { Throttle } from '../auth/throttle.js';
import { defineExportJob } from './export.job.js';
import { defineRetentionJob } from './personal-data.retention.js';
import { personalDataRoutes } from './personal-data.routes.js';
import { createPersonalDataService } from './personal-data.service.js';

export interface PersonalDataJobDeps {
  db: Database;
  jobs: JobQueue;
  storage: FileStorage;
  mailer: Mailer;
  publicUrl: string;
  now?: () => Date;
}

const systemClock = () => new Date();

export function definePersonalDataJobs(deps: PersonalDataJobDeps): void {
  const now = deps.now ?? systemClock;
  defineExportJob(deps.jobs, { db: deps.db, storage: deps.storage, mailer: deps.mailer, publicUrl: deps.publicUrl, now });
  defineRetentionJob(deps.jobs, { db: deps.db, storage: deps.storage, now });
}

export function registerPersonalData(
  app: App,
  deps: { db: Database; jobs: JobQueue; storage: FileStorage; secrets: SecretBox; throttle: Throttle; now?: () => Date; endVoiceCalls: (sessionIds: string[]) => Promise<void> },
): void {
  personalDataRoutes(app, createPersonalDataService({ ...deps, now: deps.now ?? systemClock }));
}
