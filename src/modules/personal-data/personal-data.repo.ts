// Data access for a person's own data across families: the counts, the scoped soft delete, and the
// pages the export reads. Every statement takes its rows from personal-scope.ts, so the three agree.
import { and, asc, count, eq, gt, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { assistants, type AssistantRow } from '../assistants/assistants.tables.js';
import { sessions, type SessionRow } from '../auth/sessions.tables.js';
import { fileCollections, files, type CollectionRow, type FileRow } from '../files/files.tables.js';
import { collectionWithFileCount } from '../files/files.repo.js';
import { deleteHistoryOf } from '../history/history.repo.js';
import { conversations, history, historyFeedback, type FeedbackRow, type HistoryRow } from '../history/history.tables.js';
import { twins } from '../twins/twins.tables.js';
import type { MemoryWithTwin } from '../memory/memory.repo.js';
import { memoryParameters } from '../memory/memory.tables.js';
import { rtSessions, type RtSessionRow } from '../realtime-voice/rt-sessions.tables.js';
import { users } from '../users/users.tables.js';
import { liveSessions, ownAssistants, ownCollections, ownFeedback, ownFiles, ownHistory, ownMemory, ownVoiceSessions } from './personal-scope.js';

export const COUNT_KINDS = ['conversations', 'history', 'files', 'collections', 'memory', 'assistants', 'favorites', 'feedback', 'sessions'] as const;
export type CountKind = (typeof COUNT_KINDS)[number];
export type PersonalCounts = Record<CountKind, number>;

const countOf = (table: SQL, where: SQL) => sql<number>`(select count(*)::int from ${table} where ${where})`;

/** Every count in one statement. */
export async function countPersonalData(db: Executor, userId: string, now: Date): Promise<PersonalCounts> {
  const [row] = await db
    .select({
      conversations: sql<number>`(select count(distinct ${history.conversationId})::int from ${history} where ${ownHistory(userId)})`,
      history: countOf(sql`${history}`, ownHistory(userId)),
      files: countOf(sql`${files}`, ownFiles(userId)),
      collections: countOf(sql`${fileCollections}`, ownCollections(userId)),
      memory: countOf(sql`${memoryParameters}`, ownMemory(userId)),
      assistants: countOf(sql`${assistants}`, ownAssistants(userId)),
      favorites: sql<number>`jsonb_array_length(${users.favoriteAssistants})`,
      feedback: countOf(sql`${historyFeedback}`, ownFeedback(userId)),
      sessions: countOf(sql`${sessions}`, liveSessions(userId, now)),
    })
    .from(users)
    .where(eq(users.id, userId));
  const counts = Object.fromEntries(COUNT_KINDS.map((kind) => [kind, Number(row?.[kind] ?? 0)]));
  return counts as PersonalCounts;
}

// The soft delete. Each function marks the person's rows of one kind and returns how many it marked.

export async function softDeleteFiles(db: Executor, userId: string, at: Date): Promise<{ files: number; collections: number }> {
  const deletedFiles = await db.update(files).set({ deletedAt: at }).where(ownFiles(userId)).returning({ id: files.id });
  const deletedCollections = await db.update(fileCollections).set({ deletedAt: at }).where(ownCollections(userId)).returning({ id: fileCollections.id });
  return { files: deletedFiles.length, collections: deletedCollections.length };
}

export async function softDeleteMemory(db: Executor, userId: string, at: Date): Promise<number> {
  const rows = await db.update(memoryParameters).set({ deletedAt: at }).where(ownMemory(userId)).returning({ id: memoryParameters.id });
  return rows.length;
}

/**
 * Marks the person's personal assistants deleted (and those they had deleted before, for the purge),
 * and takes every one of them out of everyone's favorites. Returns how many were live.
 */
export async function softDeleteAssistants(db: Executor, userId: string, at: Date): Promise<number> {
  const live = await db.update(assistants).set({ status: 'deleted', deletedAt: at }).where(ownAssistants(userId)).returning({ id: assistants.id });
  const earlier = await db
    .update(assistants)
    .set({ deletedAt: at })
    .where(and(eq(assistants.userId, userId), isNull(assistants.twinId), isNull(assistants.systemKey), isNull(assistants.deletedAt)))
    .returning({ id: assistants.id });
  const ids = [...live, ...earlier].map((row) => row.id);
  if (ids.length > 0) {
    const list = sql`array[${sql.join(ids.map((id) => sql`${id}::text`), sql`, `)}]`;
    await db
      .update(users)
      .set({
        favoriteAssistants: sql`coalesce((select jsonb_agg(e order by n) from jsonb_array_elements_text(${users.favoriteAssistants}) with ordinality as f(e, n) where e <> all(${list})), '[]'::jsonb)`,
      })
      .where(sql`${users.favoriteAssistants} ?| ${list}`);
  }
  return live.length;
}

export function softDeleteHistory(db: Executor, userId: string, at: Date): Promise<number> {
  return deleteHistoryOf(db, userId, at);
}

/**
 * Deletes the person's voice session rows outright, with the history: a row is a call's bookkeeping
 * (its token's hash, its status) and the person as the call saw them; what was said is in history.
 * Answers the sessions deleted and which of them were live: their calls are ended by the caller once
 * the delete is committed (the end then finds no row to mark).
 */
export async function deleteVoiceSessions(db: Executor, userId: string): Promise<{ count: number; live: string[] }> {
  const rows = await db.delete(rtSessions).where(ownVoiceSessions(userId)).returning({ id: rtSessions.id, status: rtSessions.status });
  return { count: rows.length, live: rows.filter((row) => row.status === 'live').map((row) => row.id) };
}

// The export reads history a page at a time, keyed on the id (a timestamp in JavaScript has less
// precision than the column, so it would make a poor key).

export async function historyPage(db: Executor, userId: string, afterId: string | null, limit: number): Promise<Array<{ row: HistoryRow; feedback: FeedbackRow | undefined }>> {
  const rows = await db
    .select()
    .from(history)
    .where(and(ownHistory(userId), afterId ? gt(history.id, afterId) : undefined))
    .orderBy(asc(history.id))
    .limit(limit);
  if (rows.length === 0) return [];
  const feedback = await db.select().from(historyFeedback).where(inArray(historyFeedback.historyId, rows.map((row) => row.id)));
  const byRecord = new Map(feedback.map((entry) => [entry.historyId, entry]));
  return rows.map((row) => ({ row, feedback: byRecord.get(row.id) }));
}

export interface ConversationExportRow {
  id: string;
  twinId: string;
  assistantId: string | null;
  title: string;
  createdAt: Date;
  lastActivityAt: Date;
  records: number;
}

/** The conversations that still hold a live record of the person. */
export async function personalConversations(db: Executor, userId: string): Promise<ConversationExportRow[]> {
  return db
    .select({
      id: conversations.id,
      twinId: conversations.twinId,
      assistantId: conversations.assistantId,
      title: conversations.title,
      createdAt: conversations.createdAt,
      lastActivityAt: conversations.lastActivityAt,
      records: count(history.id),
    })
    .from(conversations)
    .innerJoin(history, and(eq(history.twinId, conversations.twinId), eq(history.conversationId, conversations.id)))
    .where(and(eq(conversations.userId, userId), ownHistory(userId)))
    .groupBy(conversations.id)
    .orderBy(asc(conversations.createdAt), asc(conversations.id));
}

export function personalFiles(db: Executor, userId: string): Promise<FileRow[]> {
  return db.select().from(files).where(ownFiles(userId)).orderBy(asc(files.createdAt), asc(files.id));
}

export function personalCollections(db: Executor, userId: string): Promise<Array<CollectionRow & { fileCount: number }>> {
  return db
    .select(collectionWithFileCount)
    .from(fileCollections)
    .where(ownCollections(userId))
    .orderBy(asc(fileCollections.createdAt), asc(fileCollections.id));
}

export async function personalMemory(db: Executor, userId: string): Promise<MemoryWithTwin[]> {
  const rows = await db
    .select({
      row: memoryParameters,
      twin: { id: twins.id, name: twins.name, ainame: twins.ainame, picture: twins.picture },
    })
    .from(memoryParameters)
    .innerJoin(twins, eq(twins.id, memoryParameters.twinId))
    .where(ownMemory(userId))
    .orderBy(asc(memoryParameters.createdAt), asc(memoryParameters.id));
  return rows.map(({ row, twin }) => ({ ...row, twin }));
}

export function personalAssistants(db: Executor, userId: string): Promise<AssistantRow[]> {
  return db.select().from(assistants).where(ownAssistants(userId)).orderBy(asc(assistants.createdAt), asc(assistants.id));
}

export function personalFeedback(db: Executor, userId: string): Promise<FeedbackRow[]> {
  return db
    .select({ feedback: historyFeedback })
    .from(historyFeedback)
    .innerJoin(history, and(eq(history.twinId, historyFeedback.twinId), eq(history.id, historyFeedback.historyId)))
    .where(and(ownFeedback(userId), isNull(history.deletedAt)))
    .orderBy(asc(historyFeedback.createdAt), asc(historyFeedback.id))
    .then((rows) => rows.map((row) => row.feedback));
}

export function personalSessions(db: Executor, userId: string, now: Date): Promise<SessionRow[]> {
  return db.select().from(sessions).where(liveSessions(userId, now)).orderBy(asc(sessions.createdAt), asc(sessions.id));
}

export function personalVoiceSessions(db: Executor, userId: string): Promise<RtSessionRow[]> {
  return db.select().from(rtSessions).where(ownVoiceSessions(userId)).orderBy(asc(rtSessions.createdAt), asc(rtSessions.id));
}

export async function personOf(db: Executor, userId: string) {
  const [row] = await db.select().from(users).where(and(eq(users.id, userId), isNull(users.deletedAt))).limit(1);
  return row;
}
