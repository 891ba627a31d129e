// Hot-path queries built once per database. Drizzle spends 70-100 µs building a select of one of our
// wide tables, more than the database takes to answer it; a prepared query is built once and only
// executed after. Inside a transaction the query is built as usual (a prepared query belongs to the
// session it was made on).
import { sql } from 'drizzle-orm';
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

/** A query built by a `ShapedQuery` builder: awaitable as built, or prepared under a name. */
interface Preparable<Result> extends PromiseLike<Result> {
  prepare(name: string): { execute(values: Record<string, unknown>): Promise<Result> };
}

/** Builds a query of one shape, taking each input through `param` (a placeholder, or the value itself). */
export type ShapedQuery<Result> = (db: Executor, param: (name: string) => unknown) => Preparable<Result>;

/** Statement names by shape: one prepared statement per shape, database and connection. */
const shapeNames = new Map<string, string>();

/**
 * Runs a query whose text depends on a few choices (`shape`, a key naming them all) and whose inputs
 * are `values`: prepared once per shape and database outside transactions (its inputs as placeholders),
 * built with the values themselves inside one. Inputs that vary per call (ids, times) must be values,
 * never column defaults, which a prepared query would evaluate once.
 */
export async function executeShaped<Result>(executor: Executor, shape: string, build: ShapedQuery<Result>, values: Record<string, unknown>): Promise<Result> {
  let name = shapeNames.get(shape);
  if (!name) shapeNames.set(shape, (name = `shaped_${shapeNames.size + 1}`));
  const prepared = preparedOn(executor, name, (db) => build(db, (param) => sql.placeholder(param)).prepare(name));
  return prepared ? prepared.execute(values) : build(executor, (param) => values[param]);
}
