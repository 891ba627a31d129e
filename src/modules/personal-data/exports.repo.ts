// Data access for the export rows (data_exports). The partial unique index on (user_id) while queued
// or running is what makes "one export at a time per person" hold under concurrent requests.
import { and, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { dataExports, type DataExportRow } from './personal-data.tables.js';

const ACTIVE = ['queued', 'running'] as const;

/** A new queued export, or undefined when the person already has one queued or running. */
export async function insertExport(db: Executor, userId: string): Promise<DataExportRow | undefined> {
  const [row] = await db
    .insert(dataExports)
    .values({ userId })
    .onConflictDoNothing({ target: dataExports.userId, where: sql`${dataExports.status} in ('queued', 'running')` })
    .returning();
  return row;
}

export async function findActiveExport(db: Executor, userId: string): Promise<DataExportRow | undefined> {
  const [row] = await db
    .select()
    .from(dataExports)
    .where(and(eq(dataExports.userId, userId), inArray(dataExports.status, [...ACTIVE])))
    .limit(1);
  return row;
}

export async function findExport(db: Executor, id: string): Promise<DataExportRow | undefined> {
  const [row] = await db.select().from(dataExports).where(eq(dataExports.id, id)).limit(1);
  return row;
}

export async function updateExport(db: Executor, id: string, values: Partial<typeof dataExports.$inferInsert>): Promise<DataExportRow | undefined> {
  const [row] = await db.update(dataExports).set(values).where(eq(dataExports.id, id)).returning();
  return row;
}

/** Writes progress only while the export runs (a late write of a superseded attempt changes nothing). */
export async function setProgress(db: Executor, id: string, progress: number): Promise<void> {
  await db
    .update(dataExports)
    .set({ progress })
    .where(and(eq(dataExports.id, id), eq(dataExports.status, 'running')));
}

/** Archives whose link has expired and that are still in storage. */
export async function expiredArchives(db: Executor, now: Date, limit: number): Promise<DataExportRow[]> {
  return db
    .select()
    .from(dataExports)
    .where(and(isNotNull(dataExports.storageKey), isNull(dataExports.purgedAt), lt(dataExports.expiresAt, now)))
    .limit(limit);
}

/** Exports queued or running without a change since `before`: their job is gone (retries spent). */
export async function failStaleExports(db: Executor, before: Date): Promise<number> {
  const rows = await db
    .update(dataExports)
    .set({ status: 'failed', error: 'The export stopped and could not be completed' })
    .where(and(inArray(dataExports.status, [...ACTIVE]), lt(dataExports.updatedAt, before)))
    .returning({ id: dataExports.id });
  return rows.length;
}
