// Data access for conversations, history records and their feedback. Every function takes the
// executor it runs on; reads of lists never load the working detail columns.
import { and, asc, desc, eq, getTableColumns, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { newId } from '../../platform/ids/ids.js';
import type { Executor } from '../../platform/db/client.js';
import { sqlStateOf } from '../../platform/db/errors.js';
import { executeShaped } from '../../platform/db/prepared.js';
import { institutions } from '../institutions/institutions.tables.js';
import { users } from '../users/users.tables.js';
import { conversations, history, historyFeedback, type ConversationRow, type FeedbackRow, type HistoryRow } from './history.tables.js';

export type NewConversation = typeof conversations.$inferInsert;
export type NewHistory = typeof history.$inferInsert;
export type HistoryUpdate = Partial<Omit<NewHistory, 'id' | 'institutionId' | 'conversationId' | 'userId'>>;

/** Which twins a query may read: every twin (super admin) or the listed ones. */
export type TwinScope = { all: true } | { ids: readonly string[] };

/** The columns a list shows: everything but the working detail itself. */
const summaryColumns = {
  id: history.id,
  institutionId: history.institutionId,
  conversationId: history.conversationId,
  userId: history.userId,
  assistantId: history.assistantId,
  assistantName: history.assistantName,
  question: history.question,
  answer: history.answer,
  status: history.status,
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

const feedbackJoin = and(eq(historyFeedback.institutionId, history.institutionId), eq(historyFeedback.historyId, history.id));

function selectSummaries(db: Executor) {
  return db.select(summaryColumns).from(history).leftJoin(historyFeedback, feedbackJoin);
}

export type HistorySummaryRow = Awaited<ReturnType<typeof selectSummaries>>[number];

export interface AdminHistoryRow extends HistorySummaryRow {
  userEmail: string | null;
  userFname: string | null;
  userLname: string | null;
  institutionName: string | null;
}

// Conversations.

export interface OpeningRecord {
  conversation: Pick<NewConversation, 'institutionId' | 'userId' | 'assistantId' | 'title'>;
  /** Continue this conversation when it is the caller's own in this twin; else a new one opens. */
  continueId?: string;
  record: Omit<NewHistory, 'id' | 'conversationId' | 'institutionId' | 'userId' | 'createdAt'>;
  at: Date;
  /**
   * Open only while this balance can hold `amount` (its credits less what other turns hold): the
   * person's ('user') or the twin's pool ('institution'). The statement adds the amount to the
   * balance's holds and writes it on the record; when the balance cannot hold it, the statement
   * refuses as a whole (nothing written; UnfundedOpeningError).
   */
  hold?: TurnHold;
}

/** What a priced turn holds from the balance that pays, from its opening until it settles. */
export interface TurnHold {
  account: 'user' | 'institution';
  amount: number;
}

/** SQLSTATE of a turn's opening refused because the balance that pays cannot hold its cost (migration 0009). */
const UNFUNDED_STATE = 'DT402';

/** The opening was refused: the balance that pays cannot hold the turn's most expensive cost. */
export class UnfundedOpeningError extends Error {
  constructor(readonly account: 'user' | 'institution') {
    super(`The ${account === 'user' ? "person's" : "twin's"} balance cannot cover this turn`);
  }
}

/**
 * A turn's opening in one statement: touches the caller's own conversation or opens a new one, and
 * inserts the record in it. The statement also turns off waiting for its WAL flush (a transaction-
 * local set_config, read in RETURNING so that it runs); in a caller's transaction that holds until
 * the transaction ends.
 */
export async function insertOpeningRecord(db: Executor, opening: OpeningRecord): Promise<OpenedRecord> {
  const { institutionId, userId } = opening.conversation;
  const values: Record<string, unknown> = {
    ...Object.fromEntries(Object.entries(opening.record).map(([key, value]) => [`r_${key}`, value])),
    ...(opening.hold ? { r_heldCredits: opening.hold.amount, r_heldAccount: opening.hold.account, hold: opening.hold.amount } : {}),
    id: newId(),
    conversationId: newId(),
    institutionId,
    userId,
    continueId: opening.continueId ?? null,
    assistantId: opening.conversation.assistantId ?? null,
    title: opening.conversation.title ?? '',
    at: opening.at.toISOString(),
    createdAt: opening.at,
  };
  const holdColumns = opening.hold ? ['heldAccount', 'heldCredits'] : [];
  const shape: OpeningShape = { continues: Boolean(opening.continueId), columns: [...Object.keys(opening.record), ...holdColumns].sort(), heldBy: opening.hold?.account ?? null };
  // Prepared once per shape outside a transaction: drizzle takes longer to build it than the database to run it.
  const name = `open_turn:${shape.continues}:${shape.heldBy}:${shape.columns.join(',')}`;
  try {
    const [row] = await executeShaped(db, name, (d, param) => openingQuery(d, shape, param), values);
    const { commitMode: _mode, funded: _funded, ...record } = row;
    return record;
  } catch (error) {
    if (shape.heldBy && sqlStateOf(error) === UNFUNDED_STATE) throw new UnfundedOpeningError(shape.heldBy);
    throw error;
  }
}

/** A record as just opened, with its version: updated_at exactly as stored (a Date keeps milliseconds only). */
export type OpenedRecord = HistoryRow & { version: string };

/** A record's version as OpenedRecord carries it, and as a statement compares it: `${history.updatedAt} = version::timestamptz`. */
export const historyVersion = sql<string>`${history.updatedAt}::text`;

interface OpeningShape {
  continues: boolean;
  /** The record's columns given by the caller. */
  columns: string[];
  /** Whose balance holds the turn's cost: the person's, the twin's pool, or none (a free turn). */
  heldBy: 'user' | 'institution' | null;
}

/**
 * The hold: adds the turn's amount to the paying balance's holds while what is left covers it (under
 * that row's lock, so racing openings never hold more than the balance). No row when it does not.
 */
function holdStatement(db: Executor, heldBy: 'user' | 'institution', param: (name: string) => unknown) {
  const table = heldBy === 'user' ? users : institutions;
  return db.$with('held', { ok: sql<number>`ok` }).as(
    sql`update ${table} set ${sql.identifier(table.creditsHeld.name)} = ${table.creditsHeld} + ${param('hold')}::numeric
        where ${table.id} = ${param(heldBy === 'user' ? 'userId' : 'institutionId')} and ${table.credits} - ${table.creditsHeld} >= ${param('hold')}::numeric
        returning 1 as ok`,
  );
}

/**
 * 1 when the hold was taken (or none was asked); else the statement fails with UNFUNDED_STATE, which
 * undoes everything it wrote (read in RETURNING, so it runs; an empty result never gets that far).
 */
function holdCheck(heldBy: 'user' | 'institution' | null) {
  if (!heldBy) return sql<number>`1`;
  return sql<number>`case when exists (select 1 from held) then 1 else refuse_statement(${UNFUNDED_STATE}, 'the balance that pays cannot cover this turn') end`;
}

function openingQuery(db: Executor, shape: OpeningShape, param: (name: string) => unknown) {
  const commitMode = db.$with('commit_mode', { mode: sql<string>`mode` }).as(sql`select set_config('synchronous_commit', 'off', true) as mode`);
  const own = db.$with('own', { id: sql<string>`id` }).as(
    shape.continues
      ? sql`update ${conversations} set ${sql.identifier(conversations.lastActivityAt.name)} = greatest(${conversations.lastActivityAt}, ${param('at')}::timestamptz)
          where ${conversations.institutionId} = ${param('institutionId')} and ${conversations.id} = ${param('continueId')} and ${conversations.userId} = ${param('userId')}
          returning ${conversations.id}`
      : sql`select null::char(24) as id where false`,
  );
  const opened = db.$with('opened', { id: sql<string>`id` }).as(
    sql`insert into ${conversations} (${sql.join(OPENED_COLUMNS.map((column) => sql.identifier(column.name)), sql`, `)})
        select ${param('conversationId')}, ${param('institutionId')}, ${param('userId')}, ${param('assistantId')}, ${param('title')}, ${param('at')}::timestamptz, ${param('at')}::timestamptz
        where not exists (select 1 from own)
        returning ${conversations.id}`,
  );
  const record = Object.fromEntries(shape.columns.map((column) => [column, param(`r_${column}`)])) as Omit<NewHistory, 'institutionId' | 'userId' | 'conversationId'>;
  const ctes = shape.heldBy ? [commitMode, own, opened, holdStatement(db, shape.heldBy, param)] : [commitMode, own, opened];
  return db
    .with(...ctes)
    .insert(history)
    .values({
      ...record,
      id: param('id') as string,
      institutionId: param('institutionId') as string,
      userId: param('userId') as string,
      conversationId: sql`coalesce((select id from own), (select id from opened))`,
      createdAt: param('createdAt') as Date,
    })
    .returning({ ...getTableColumns(history), version: historyVersion, commitMode: sql<string>`(select mode from commit_mode)`, funded: holdCheck(shape.heldBy) });
}

const OPENED_COLUMNS = [
  conversations.id,
  conversations.institutionId,
  conversations.userId,
  conversations.assistantId,
  conversations.title,
  conversations.createdAt,
  conversations.lastActivityAt,
];

export async function touchConversation(db: Executor, institutionId: string, id: string, at: Date): Promise<void> {
  await db
    .update(conversations)
    .set({ lastActivityAt: sql`greatest(${conversations.lastActivityAt}, ${at.toISOString()}::timestamptz)` })
    .where(and(eq(conversations.institutionId, institutionId), eq(conversations.id, id)));
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
  institutionId?: string;
  page: number;
  limit: number;
}

function historyWhere(filter: Omit<HistoryFilter, 'page' | 'limit'>): SQL | undefined {
  const conditions: (SQL | undefined)[] = [isNull(history.deletedAt)];
  if (!('all' in filter.scope)) conditions.push(inArray(history.institutionId, [...filter.scope.ids]));
  if (filter.institutionId) conditions.push(eq(history.institutionId, filter.institutionId));
  if (filter.userId) conditions.push(eq(history.userId, filter.userId));
  if (filter.conversationId) conditions.push(eq(history.conversationId, filter.conversationId));
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
        institutionName: institutions.name,
      })
      .from(history)
      .leftJoin(historyFeedback, feedbackJoin)
      .leftJoin(users, eq(users.id, history.userId))
      .leftJoin(institutions, eq(institutions.id, history.institutionId))
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
  if ('ids' in scope) conditions.push(inArray(history.institutionId, [...scope.ids]));
  if (ownerId) conditions.push(eq(history.userId, ownerId));
  const deleted = await db
    .update(history)
    .set({
      deletedAt: new Date(),
      question: '',
      answer: '',
      error: null,
      toolCalls: [],
      subagents: [],
      ragSearch: [],
      reasoning: null,
      memories: [],
    })
    .where(and(...conditions))
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
        eq(history.institutionId, sql`(select ${conversations.institutionId} from ${conversations} where ${conversations.id} = ${conversationId})`),
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

// Feedback.

export async function upsertFeedback(
  db: Executor,
  values: { institutionId: string; historyId: string; userId: string; rating: FeedbackRow['rating']; comment: string },
): Promise<FeedbackRow> {
  const [row] = await db
    .insert(historyFeedback)
    .values(values)
    .onConflictDoUpdate({
      target: [historyFeedback.institutionId, historyFeedback.historyId],
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
  institutionName: string | null;
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
      institutionName: institutions.name,
    })
    .from(historyFeedback)
    .innerJoin(history, and(eq(history.institutionId, historyFeedback.institutionId), eq(history.id, historyFeedback.historyId)))
    .leftJoin(users, eq(users.id, historyFeedback.userId))
    .leftJoin(institutions, eq(institutions.id, historyFeedback.institutionId));
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
  filter: { scope: TwinScope; institutionId?: string; userId?: string; rating?: FeedbackRow['rating']; page: number; limit: number },
): Promise<{ rows: AdminFeedbackRow[]; total: number }> {
  if ('ids' in filter.scope && filter.scope.ids.length === 0) return { rows: [], total: 0 };
  const conditions: (SQL | undefined)[] = [];
  if ('ids' in filter.scope) conditions.push(inArray(historyFeedback.institutionId, [...filter.scope.ids]));
  if (filter.institutionId) conditions.push(eq(historyFeedback.institutionId, filter.institutionId));
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
  if ('ids' in scope) conditions.push(inArray(historyFeedback.institutionId, [...scope.ids]));
  const deleted = await db.delete(historyFeedback).where(and(...conditions)).returning({ id: historyFeedback.id });
  return deleted.length;
}

export async function findFeedback(db: Executor, institutionId: string, historyId: string): Promise<FeedbackRow | undefined> {
  const [row] = await db
    .select()
    .from(historyFeedback)
    .where(and(eq(historyFeedback.institutionId, institutionId), eq(historyFeedback.historyId, historyId)))
    .limit(1);
  return row;
}
