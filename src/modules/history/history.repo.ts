// Data access for conversations and history records (their feedback: feedback.repo.ts). Every function
// takes the executor it runs on; reads of lists never load the working detail columns.
import { and, asc, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { conversations, history, historyFeedback, type ConversationRow, type FeedbackRow, type HistoryRow } from './history.tables.js';

export type NewConversation = typeof conversations.$inferInsert;
export type NewHistory = typeof history.$inferInsert;
export type HistoryUpdate = Partial<Omit<NewHistory, 'id' | 'twinId' | 'conversationId' | 'userId'>>;

/** Which twins a query may read: every twin (super admin) or the listed ones. */
export type TwinScope = { all: true } | { ids: readonly string[] };

/** An access scope ('all' or twin ids, modules/access) in the shape these queries take. */
export function toTwinScope(twinIds: 'all' | readonly string[]): TwinScope {
  return twinIds === 'all' ? { all: true } : { ids: twinIds };
}

/** The columns a list shows: everything but the working detail itself. */
const summaryColumns = {
  id: history.id,
  twinId: history.twinId,
  conversationId: history.conversationId,
  userId: history.userId,
  assistantId: history.assistantId,
  assistantName: history.assistantName,
  question: history.question,
  answer: history.answer,
  status: history.status,
  mode: history.mode,
  models: history.models,
  inputTokens: history.inputTokens,
  outputTokens: history.outputTokens,
  reasoningTokens: history.reasoningTokens,
  credits: history.credits,
  hasReasoning: sql<boolean>`(${history.reasoning} is not null and ${history.reasoning} <> '')`.as('has_reasoning'),
  toolCallCount: history.toolCallCount,
  subagentCount: history.subagentCount,
  ragSearchCount: history.ragSearchCount,
  memoryCount: history.memoryCount,
  ragSearchMode: history.ragSearchMode,
  detailsExpiredAt: history.detailsExpiredAt,
  createdAt: history.createdAt,
  completedAt: history.completedAt,
  feedbackRating: historyFeedback.rating,
  feedbackComment: historyFeedback.comment,
};

const feedbackJoin = and(eq(historyFeedback.twinId, history.twinId), eq(historyFeedback.historyId, history.id));

function selectSummaries(db: Executor) {
  return db.select(summaryColumns).from(history).leftJoin(historyFeedback, feedbackJoin);
}

export type HistorySummaryRow = Awaited<ReturnType<typeof selectSummaries>>[number];

export interface AdminHistoryRow extends HistorySummaryRow {
  userEmail: string | null;
  userFname: string | null;
  userLname: string | null;
  twinName: string | null;
}

// Conversations.

export async function touchConversation(db: Executor, twinId: string, id: string, at: Date): Promise<void> {
  await db
    .update(conversations)
    .set({ lastActivityAt: sql`greatest(${conversations.lastActivityAt}, ${at.toISOString()}::timestamptz)` })
    .where(and(eq(conversations.twinId, twinId), eq(conversations.id, id)));
}

// Records.

/** A live (not deleted) record by id, whatever its twin: callers decide who may see it. */
export async function findHistory(db: Executor, id: string): Promise<HistoryRow | undefined> {
  const [row] = await db.select().from(history).where(and(eq(history.id, id), isNull(history.deletedAt))).limit(1);
  return row;
}

/** The record locked for the rest of the transaction (deleted ones too: the engine still records usage). */
export async function lockHistory(db: Executor, id: string): Promise<HistoryRow | undefined> {
  const [row] = await db.select().from(history).where(eq(history.id, id)).limit(1).for('update');
  return row;
}

/** The credits a settled turn charged; returns nothing (the caller has the row it just finished). */
export async function setHistoryCredits(db: Executor, id: string, credits: number): Promise<void> {
  await db.update(history).set({ credits }).where(eq(history.id, id));
}

export async function updateHistory(db: Executor, id: string, values: HistoryUpdate): Promise<HistoryRow> {
  const [row] = await db.update(history).set(values).where(eq(history.id, id)).returning();
  return row;
}

export interface HistoryFilter {
  scope: TwinScope;
  userId?: string;
  conversationId?: string;
  twinId?: string;
  status?: HistoryRow['status'];
  page: number;
  limit: number;
}

function historyWhere(filter: Omit<HistoryFilter, 'page' | 'limit'>): SQL | undefined {
  const conditions: (SQL | undefined)[] = [isNull(history.deletedAt)];
  if (!('all' in filter.scope)) conditions.push(inArray(history.twinId, [...filter.scope.ids]));
  if (filter.twinId) conditions.push(eq(history.twinId, filter.twinId));
  if (filter.userId) conditions.push(eq(history.userId, filter.userId));
  if (filter.conversationId) conditions.push(eq(history.conversationId, filter.conversationId));
  if (filter.status) conditions.push(eq(history.status, filter.status));
  return and(...conditions);
}

export async function listHistory(db: Executor, filter: HistoryFilter): Promise<{ rows: HistorySummaryRow[]; total: number }> {
  if ('ids' in filter.scope && filter.scope.ids.length === 0) return { rows: [], total: 0 };
  const where = historyWhere(filter);
  const [rows, [{ total }]] = await Promise.all([
    selectSummaries(db)
      .where(where)
      .orderBy(desc(history.createdAt), desc(history.id))
      .limit(filter.limit)
      .offset((filter.page - 1) * filter.limit),
    db.select({ total: sql<number>`count(*)::int` }).from(history).where(where),
  ]);
  return { rows, total };
}

export async function listAdminHistory(db: Executor, filter: HistoryFilter): Promise<{ rows: AdminHistoryRow[]; total: number }> {
  if ('ids' in filter.scope && filter.scope.ids.length === 0) return { rows: [], total: 0 };
  const where = historyWhere(filter);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select({
        ...summaryColumns,
        userEmail: users.email,
        userFname: users.fname,
        userLname: users.lname,
        twinName: twins.name,
      })
      .from(history)
      .leftJoin(historyFeedback, feedbackJoin)
      .leftJoin(users, eq(users.id, history.userId))
      .leftJoin(twins, eq(twins.id, history.twinId))
      .where(where)
      .orderBy(desc(history.createdAt), desc(history.id))
      .limit(filter.limit)
      .offset((filter.page - 1) * filter.limit),
    db.select({ total: sql<number>`count(*)::int` }).from(history).where(where),
  ]);
  return { rows, total };
}

/**
 * Deletes records: they disappear from every view, their question, answer and working detail are
 * erased, their feedback goes; usage, models and credits stay for usage caps and billing.
 * Only rows of `ownerId` (when given) inside `scope` change; returns how many did.
 */
export async function deleteHistory(db: Executor, ids: readonly string[], scope: TwinScope, ownerId?: string): Promise<number> {
  if (ids.length === 0 || ('ids' in scope && scope.ids.length === 0)) return 0;
  const conditions: (SQL | undefined)[] = [inArray(history.id, [...ids]), isNull(history.deletedAt)];
  if ('ids' in scope) conditions.push(inArray(history.twinId, [...scope.ids]));
  if (ownerId) conditions.push(eq(history.userId, ownerId));
  return eraseRecords(db, and(...conditions)!);
}

/** Deletes every live record of one person, in every twin (their personal-data delete), as deleteHistory does. */
export async function deleteHistoryOf(db: Executor, userId: string, at = new Date()): Promise<number> {
  return eraseRecords(db, and(eq(history.userId, userId), isNull(history.deletedAt))!, at);
}

async function eraseRecords(db: Executor, where: SQL, at = new Date()): Promise<number> {
  const deleted = await db
    .update(history)
    .set({
      deletedAt: at,
      question: '',
      answer: '',
      error: null,
      toolCalls: [],
      subagents: [],
      ragSearch: [],
      reasoning: null,
      memories: [],
      guidance: [],
    })
    .where(where)
    .returning({ id: history.id });
  if (deleted.length > 0) {
    await db.delete(historyFeedback).where(inArray(historyFeedback.historyId, deleted.map((row) => row.id)));
  }
  return deleted.length;
}

/** The last `limit` finished exchanges of a conversation, oldest first. */
export async function recentExchangeRows(
  db: Executor,
  conversationId: string,
  userId: string,
  limit: number | 'as-set',
): Promise<Array<{ id: string; question: string; answer: string; createdAt: Date }>> {
  if (limit !== 'as-set' && limit <= 0) return [];
  // 'as-set': the person's Remember History count, read by this statement (0 when the account is gone;
  // LIMIT NULL would mean no limit). drizzle renders an SQL limit as written; its type says number.
  const count = limit === 'as-set' ? (sql`coalesce((select ${users.rememberHistoryCount} from ${users} where ${users.id} = ${userId}), 0)` as unknown as number) : limit;
  const rows = await db
    .select({ id: history.id, question: history.question, answer: history.answer, createdAt: history.createdAt })
    .from(history)
    .where(
      and(
        // The twin comes from the conversation, so the index leading with institution_id serves the query.
        eq(history.twinId, sql`(select ${conversations.twinId} from ${conversations} where ${conversations.id} = ${conversationId})`),
        eq(history.conversationId, conversationId),
        eq(history.userId, userId),
        isNull(history.deletedAt),
        inArray(history.status, ['complete', 'cancelled']),
        sql`${history.answer} <> ''`,
      ),
    )
    .orderBy(desc(history.createdAt), desc(history.id))
    .limit(count);
  return rows.reverse();
}
