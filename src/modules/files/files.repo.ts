// Data access for files and collections. Every function takes the executor it runs on. Rows their owner
// deleted (deleted_at set, personal-data delete) are read by none of them: they wait for the purge.
import { and, count, desc, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { fileCollections, files, type CollectionRow, type FileRow, type NewFile } from './files.tables.js';

export async function insertFile(db: Executor, values: NewFile): Promise<FileRow> {
  const [row] = await db.insert(files).values(values).returning();
  return row;
}

export async function findFileById(db: Executor, id: string): Promise<FileRow | undefined> {
  const [row] = await db.select().from(files).where(and(eq(files.id, id), isNull(files.deletedAt))).limit(1);
  return row;
}

export async function updateFile(db: Executor, id: string, values: Partial<NewFile>, where?: SQL): Promise<FileRow | undefined> {
  const [row] = await db
    .update(files)
    .set(values)
    .where(where ? and(eq(files.id, id), where) : eq(files.id, id))
    .returning();
  return row;
}

/** Deletes the row; its chunks go with it (foreign key cascade). */
export async function deleteFileRows(db: Executor, ids: string[]): Promise<FileRow[]> {
  if (ids.length === 0) return [];
  return db.delete(files).where(inArray(files.id, ids)).returning();
}

export async function countFilesOf(db: Executor, twinId: string, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(files)
    .where(and(eq(files.twinId, twinId), eq(files.userId, userId), isNull(files.deletedAt)));
  return row.n;
}

/**
 * Whether a search of the person in the twin could find a passage, as two cheap answers: a file of their
 * own that search sees (ingested at least once), and a shared one (which counts for holders of files.access).
 */
export async function searchableFilesOf(db: Executor, twinId: string, userId: string): Promise<{ own: boolean; shared: boolean }> {
  const seen = and(eq(files.twinId, twinId), isNull(files.deletedAt), sql`${files.generation} > 0`);
  const result = (await db.execute(
    sql`select exists (select 1 from ${files} where ${and(seen, eq(files.userId, userId))}) as own,
               exists (select 1 from ${files} where ${and(seen, eq(files.shared, true))}) as shared`,
  )) as unknown as { rows: Array<{ own: boolean; shared: boolean }> };
  const [row] = result.rows;
  return { own: Boolean(row?.own), shared: Boolean(row?.shared) };
}

/** The files a person sees in a twin: their own, plus the twin's shared files when they hold files.access. */
export function visibleFilesWhere(twinId: string, userId: string, includeShared: boolean): SQL {
  const own = eq(files.userId, userId);
  return and(eq(files.twinId, twinId), isNull(files.deletedAt), includeShared ? or(own, eq(files.shared, true)) : own)!;
}

export async function listFiles(
  db: Executor,
  scope: { twinId: string; userId: string; includeShared: boolean; collectionId?: string },
  page: { offset: number; limit: number },
): Promise<{ rows: FileRow[]; total: number }> {
  let where = visibleFilesWhere(scope.twinId, scope.userId, scope.includeShared);
  if (scope.collectionId) where = and(where, eq(files.collectionId, scope.collectionId))!;
  const [rows, [{ n }]] = await Promise.all([
    db.select().from(files).where(where).orderBy(desc(files.createdAt), desc(files.id)).offset(page.offset).limit(page.limit),
    db.select({ n: count() }).from(files).where(where),
  ]);
  return { rows, total: n };
}

export async function listTwinFiles(
  db: Executor,
  twinId: string,
  page: { offset: number; limit: number },
): Promise<{ rows: FileRow[]; total: number }> {
  const where = and(eq(files.twinId, twinId), isNull(files.deletedAt));
  const [rows, [{ n }]] = await Promise.all([
    db.select().from(files).where(where).orderBy(desc(files.createdAt), desc(files.id)).offset(page.offset).limit(page.limit),
    db.select({ n: count() }).from(files).where(where),
  ]);
  return { rows, total: n };
}

export async function findFilesByIds(db: Executor, ids: string[]): Promise<FileRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(files).where(and(inArray(files.id, ids), isNull(files.deletedAt)));
}

export async function filesOfCollection(db: Executor, twinId: string, collectionId: string): Promise<FileRow[]> {
  return db
    .select()
    .from(files)
    .where(and(eq(files.twinId, twinId), eq(files.collectionId, collectionId), isNull(files.deletedAt)))
    .orderBy(files.createdAt, files.id);
}

export async function insertCollection(db: Executor, values: typeof fileCollections.$inferInsert): Promise<CollectionRow> {
  const [row] = await db.insert(fileCollections).values(values).returning();
  return row;
}

export async function findCollectionById(db: Executor, id: string): Promise<CollectionRow | undefined> {
  const [row] = await db.select().from(fileCollections).where(and(eq(fileCollections.id, id), isNull(fileCollections.deletedAt))).limit(1);
  return row;
}

/** A collection's columns and how many of its files are not deleted (the lists' shape). */
export const collectionWithFileCount = {
  id: fileCollections.id,
  twinId: fileCollections.twinId,
  userId: fileCollections.userId,
  name: fileCollections.name,
  createdAt: fileCollections.createdAt,
  deletedAt: fileCollections.deletedAt,
  fileCount: sql<number>`(select count(*)::int from files where files.collection_id = file_collections.id and files.deleted_at is null)`,
};

/** A person's collections in a twin; with files.access, every collection of the twin. */
export async function listCollections(db: Executor, twinId: string, userId: string, all: boolean): Promise<Array<CollectionRow & { fileCount: number }>> {
  const where = all
    ? and(eq(fileCollections.twinId, twinId), isNull(fileCollections.deletedAt))
    : and(eq(fileCollections.twinId, twinId), eq(fileCollections.userId, userId), isNull(fileCollections.deletedAt));
  return db
    .select(collectionWithFileCount)
    .from(fileCollections)
    .where(where)
    .orderBy(desc(fileCollections.createdAt));
}
