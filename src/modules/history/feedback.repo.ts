// Data access for the feedback on history records: a person's rating of an answer, and the review of
// it by a twin's administrators. Every function takes the executor it runs on.
import { and, asc, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import type { TwinScope } from './history.repo.js';
import { history, historyFeedback, type FeedbackRow } from './history.tables.js';

export async function upsertFeedback(
  db: Executor,
  values: { twinId: string; historyId: string; userId: string; rating: FeedbackRow['rating']; comment: string },
): Promise<FeedbackRow> {
  const [row] = await db
    .insert(historyFeedback)
    .values(values)
    .onConflictDoUpdate({
      target: [historyFeedback.twinId, historyFeedback.historyId],
      set: { rating: values.rating, comment: values.comment, status: 'new', updatedAt: new Date() },
    })
    .returning();
  return row;
}

export interface AdminFeedbackRow {
  feedback: FeedbackRow;
  question: string;
  answer: string;
  conversationId: string;
  assistantName: string;
  userEmail: string | null;
  userFname: string | null;
  userLname: string | null;
  twinName: string | null;
}

function selectAdminFeedback(db: Executor) {
  return db
    .select({
      feedback: historyFeedback,
      question: history.question,
      answer: history.answer,
      conversationId: history.conversationId,
      assistantName: history.assistantName,
      userEmail: users.email,
      userFname: users.fname,
      userLname: users.lname,
      twinName: twins.name,
    })
    .from(historyFeedback)
    .innerJoin(history, and(eq(history.twinId, historyFeedback.twinId), eq(history.id, historyFeedback.historyId)))
    .leftJoin(users, eq(users.id, historyFeedback.userId))
    .leftJoin(twins, eq(twins.id, historyFeedback.twinId));
}

/** One feedback row with what the admin views show beside it, whatever its twin (the service checks). */
export async function findAdminFeedback(db: Executor, id: string): Promise<AdminFeedbackRow | undefined> {
  const [row] = await selectAdminFeedback(db).where(eq(historyFeedback.id, id)).limit(1);
  return row;
}

export async function updateFeedbackReview(
  db: Executor,
  id: string,
  changes: { status?: FeedbackRow['status']; adminNote?: string },
): Promise<void> {
  await db.update(historyFeedback).set({ ...changes, updatedAt: new Date() }).where(eq(historyFeedback.id, id));
}

export async function listFeedback(
  db: Executor,
  filter: { scope: TwinScope; twinId?: string; userId?: string; rating?: FeedbackRow['rating']; page: number; limit: number },
): Promise<{ rows: AdminFeedbackRow[]; total: number }> {
  if ('ids' in filter.scope && filter.scope.ids.length === 0) return { rows: [], total: 0 };
  const conditions: (SQL | undefined)[] = [];
  if ('ids' in filter.scope) conditions.push(inArray(historyFeedback.twinId, [...filter.scope.ids]));
  if (filter.twinId) conditions.push(eq(historyFeedback.twinId, filter.twinId));
  if (filter.userId) conditions.push(eq(historyFeedback.userId, filter.userId));
  if (filter.rating) conditions.push(eq(historyFeedback.rating, filter.rating));
  const where = and(...conditions);
  const [rows, [{ total }]] = await Promise.all([
    selectAdminFeedback(db)
      .where(where)
      .orderBy(desc(historyFeedback.createdAt), asc(historyFeedback.id))
      .limit(filter.limit)
      .offset((filter.page - 1) * filter.limit),
    db.select({ total: sql<number>`count(*)::int` }).from(historyFeedback).where(where),
  ]);
  return { rows, total };
}

export async function deleteFeedback(db: Executor, ids: readonly string[], scope: TwinScope): Promise<number> {
  if (ids.length === 0 || ('ids' in scope && scope.ids.length === 0)) return 0;
  const conditions: (SQL | undefined)[] = [inArray(historyFeedback.id, [...ids])];
  if ('ids' in scope) conditions.push(inArray(historyFeedback.twinId, [...scope.ids]));
  const deleted = await db.delete(historyFeedback).where(and(...conditions)).returning({ id: historyFeedback.id });
  return deleted.length;
}

export async function findFeedback(db: Executor, twinId: string, historyId: string): Promise<FeedbackRow | undefined> {
  const [row] = await db
    .select()
    .from(historyFeedback)
    .where(and(eq(historyFeedback.twinId, twinId), eq(historyFeedback.historyId, historyId)))
    .limit(1);
  return row;
}
