// Hot-path queries built once per database. Drizzle spends 70-100 µs building a select of one of our
// wide tables, more than the database takes to answer it; a prepared query is built once and only
// executed after. Inside a transaction the query is built as usual (a prepared query belongs to the
// session it was made on).
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Database, Executor } from './client.js';

const built = new WeakMap<Database, Map<string, unknown>>();

/** The query `prepare` makes for this database (once), or undefined inside a transaction. */
export function preparedOn<Query>(executor: Executor, name: string, prepare: (db: Database) => Query): Query | undefined {
  if (executor instanceof PgTransaction) return undefined;
  const db = executor as Database;
  let queries = built.get(db);
  if (!queries) built.set(db, (queries = new Map()));
  let query = queries.get(name) as Query | undefined;
  if (!query) queries.set(name, (query = prepare(db)));
  return query;
}
