// A person's data exports: one row per requested ZIP archive, from queued to ready (or failed), with
// where the finished archive is stored and the hash of the token its mailed link carries. Person-owned
// rather than tenant-owned (an export covers every twin the person has worked in), so keyed by user_id.
import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, smallint, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn, updatedAt } from '../../platform/db/columns.js';

export const EXPORT_STATUSES = ['queued', 'running', 'ready', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const dataExports = pgTable(
  'data_exports',
  {
    id: idColumn(),
    userId: refColumn('user_id').notNull(),
    status: text('status', { enum: EXPORT_STATUSES }).notNull().default('queued'),
    /** 0-100, written as the archive is built. */
    progress: smallint('progress').notNull().default(0),
    /** Set once the archive is complete under its key; a half-written archive never has one. */
    storageKey: text('storage_key'),
    size: bigint('size', { mode: 'number' }),
    /** sha256 of the download link's token (the token itself is only in the mail). */
    tokenHash: text('token_hash'),
    attempts: integer('attempts').notNull().default(0),
    error: text('error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    readyAt: timestampColumn('ready_at'),
    /** The link stops working at this moment, and the retention job then deletes the archive. */
    expiresAt: timestampColumn('expires_at'),
    /** When the mail with the link went out (a retry after a failed send mails again). */
    mailedAt: timestampColumn('mailed_at'),
    /** When the retention job deleted the archive. */
    purgedAt: timestampColumn('purged_at'),
  },
  (t) => [
    index('data_exports_user_created_idx').on(t.userId, t.createdAt),
    // One export at a time per person: a second request finds the one in progress.
    uniqueIndex('data_exports_one_active_key').on(t.userId).where(sql`${t.status} in ('queued', 'running')`),
    index('data_exports_expiring_idx').on(t.expiresAt).where(sql`${t.purgedAt} is null and ${t.storageKey} is not null`),
  ],
);

export type DataExportRow = typeof dataExports.$inferSelect;
