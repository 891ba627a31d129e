// The export job: builds a person's archive as a stream into storage, then publishes it in one step
// (status ready, the key, the link's token hash and its expiry) and mails the link. The archive is
// written under its own key by FileStorage.put, which makes the key appear only once the last byte is
// stored, so a worker killed mid-export leaves no archive behind any link: pg-boss expires the job
// and a retry starts the archive again from the beginning.
import { Readable } from 'node:stream';
import { z } from 'zod';
import { hashToken, randomToken } from '../../platform/crypto/hash.js';
import type { Database } from '../../platform/db/client.js';
import type { JobContext, JobQueue } from '../../platform/jobs/queue.js';
import type { Mailer } from '../../platform/mail/mailer.js';
import type { FileStorage } from '../../platform/storage/storage.js';
import { zipEntries } from '../../platform/storage/zip-stream.js';
import { archiveEntries, workUnits } from './export-contents.js';
import { setProgress, updateExport, findExport } from './exports.repo.js';
import { countPersonalData, personOf } from './personal-data.repo.js';

export const EXPORT_JOB = 'personal-data.export';
/** How long the mailed link works after the archive is ready. */
export const LINK_TTL_MS = 24 * 60 * 60 * 1000;
export const EXPORT_RETRY_LIMIT = 3;
/** A job still running this long is taken as dead by pg-boss and retried. */
export const EXPORT_EXPIRE_SECONDS = 30 * 60;

export interface ExportJobDeps {
  db: Database;
  storage: FileStorage;
  mailer: Mailer;
  publicUrl: string;
  now: () => Date;
}

export const exportPayload = z.object({ exportId: z.string().regex(/^[0-9a-f]{24}$/) });

declare module '../../platform/jobs/queue.js' {
  interface Jobs {
    'personal-data.export': z.infer<typeof exportPayload>;
  }
}

export const archiveKey = (exportId: string) => `exports/${exportId}`;

export function downloadLink(publicUrl: string, exportId: string, token: string): string {
  return `${publicUrl}/api/user/data/export/${exportId}/download?token=${encodeURIComponent(token)}`;
}

export function defineExportJob(jobs: JobQueue, deps: ExportJobDeps): void {
  jobs.define({
    name: EXPORT_JOB,
    schema: exportPayload,
    perform: (payload, context) => performExport(deps, payload.exportId, context),
    retryLimit: EXPORT_RETRY_LIMIT,
    retryDelaySeconds: 30,
    retryBackoff: true,
    expireInSeconds: EXPORT_EXPIRE_SECONDS,
    // One archive at a time per process: the work is I/O and compression, not worth running side by side.
    concurrency: 1,
    // The process died in the last attempt (queue.ts takes the job back): the export fails as a perform's last failure would.
    abandoned: async ({ exportId }) => {
      const current = await findExport(deps.db, exportId);
      if (current && (current.status === 'queued' || current.status === 'running')) await updateExport(deps.db, exportId, { status: 'failed', error: 'The export could not be completed' });
    },
  });
}

/** Idempotent: a finished export is only mailed again if its mail had not gone out. */
export async function performExport(deps: ExportJobDeps, exportId: string, context: Pick<JobContext, 'attempt' | 'signal'>): Promise<void> {
  const { db } = deps;
  const current = await findExport(db, exportId);
  if (!current || current.status === 'failed') return;
  if (current.status === 'ready') {
    if (!current.mailedAt) await mailLink(deps, exportId);
    return;
  }
  await updateExport(db, exportId, { status: 'running', progress: 0, attempts: context.attempt, error: null });
  try {
    const key = archiveKey(exportId);
    const now = deps.now();
    const total = workUnits(await countPersonalData(db, current.userId, now));
    let shown = 0;
    const entries = archiveEntries(db, deps.storage, current.userId, now, async (done) => {
      // Below 100 until the archive is published; written when it moves by a point or more.
      const progress = Math.min(99, Math.floor((done / total) * 100));
      if (progress > shown) {
        shown = progress;
        await setProgress(db, exportId, progress);
      }
    });
    const { size } = await deps.storage.put(key, Readable.from(zipEntries(entries, context.signal)));
    const readyAt = deps.now();
    await updateExport(db, exportId, {
      status: 'ready',
      progress: 100,
      storageKey: key,
      size,
      readyAt,
      expiresAt: new Date(readyAt.getTime() + LINK_TTL_MS),
    });
  } catch (error) {
    const lastAttempt = context.attempt > EXPORT_RETRY_LIMIT;
    await updateExport(db, exportId, lastAttempt ? { status: 'failed', error: 'The export could not be completed' } : { status: 'queued', progress: 0 });
    throw error;
  }
  await mailLink(deps, exportId);
}

/** A new token for the link (its hash replaces any earlier one), then the mail. */
async function mailLink(deps: ExportJobDeps, exportId: string): Promise<void> {
  const token = randomToken(32);
  const row = await updateExport(deps.db, exportId, { tokenHash: hashToken(token) });
  const person = row && (await personOf(deps.db, row.userId));
  if (!row || !person || !row.expiresAt) return;
  await deps.mailer.send({
    to: person.email,
    subject: 'Your data export is ready',
    text:
      `The archive of your personal data is ready.\n\nDownload it here:\n${downloadLink(deps.publicUrl, exportId, token)}\n\n` +
      `The link works until ${row.expiresAt.toISOString()} (24 hours); after that the archive is deleted.\n` +
      `If you did not ask for this export, change your password.\n`,
  });
  await updateExport(deps.db, exportId, { mailedAt: deps.now() });
}
