// Data access for suggested questions; every read is confined to the twins it is given.
import { and, asc, eq, ilike, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { setsSomething } from '../../platform/db/updates.js';
import { questions, type QuestionRow } from './questions.tables.js';

export type NewQuestion = typeof questions.$inferInsert;
const inOrder = [asc(questions.twinId), asc(questions.position), asc(questions.createdAt), asc(questions.id)] as const;

export async function listQuestions(db: Executor, filter: { twins: 'all' | string[]; search?: string }, page: { offset: number; limit: number }) {
  if (filter.twins !== 'all' && filter.twins.length === 0) return { rows: [], total: 0 };
  const pattern = filter.search ? `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const where = and(filter.twins === 'all' ? undefined : inArray(questions.twinId, filter.twins), pattern ? ilike(questions.text, pattern) : undefined);
  const rows = await db.select().from(questions).where(where).orderBy(...inOrder).offset(page.offset).limit(page.limit);
  const [count] = await db.select({ total: sql<number>`count(*)::int` }).from(questions).where(where);
  return { rows, total: count.total };
}

/** A twin's questions in the order its start screen shows them (at most `limit`). */
export function questionsOfTwin(db: Executor, twinId: string, limit = 100): Promise<QuestionRow[]> {
  return db.select().from(questions).where(eq(questions.twinId, twinId)).orderBy(...inOrder).limit(limit);
}

export async function findQuestion(db: Executor, id: string): Promise<QuestionRow | undefined> {
  const [row] = await db.select().from(questions).where(eq(questions.id, id)).limit(1);
  return row;
}

export async function insertQuestion(db: Executor, values: NewQuestion): Promise<QuestionRow> {
  const [row] = await db.insert(questions).values(values).returning();
  return row;
}

export async function updateQuestion(db: Executor, id: string, values: Partial<NewQuestion>): Promise<QuestionRow | undefined> {
  if (!setsSomething(values)) return findQuestion(db, id);
  const [row] = await db.update(questions).set(values).where(eq(questions.id, id)).returning();
  return row;
}

/** Deletes the listed questions that lie in these twins; answers how many went. */
export async function deleteQuestions(db: Executor, ids: string[], twins: 'all' | string[]): Promise<number> {
  if (ids.length === 0 || (twins !== 'all' && twins.length === 0)) return 0;
  const rows = await db
    .delete(questions)
    .where(and(inArray(questions.id, ids), twins === 'all' ? undefined : inArray(questions.twinId, twins)))
    .returning({ id: questions.id });
  return rows.length;
}
