// Hot-path queries built once per database. Drizzle spends 70-100 µs building a select of one of our
// wide tables, more than the database takes to answer it; a prepared query is built once and only
// executed after. Inside a transaction the query is built as usual (a prepared query belongs to the
// session it was made on). A turn's own two statements go further (runShaped): their text and inputs
// are taken from drizzle once, and each run only fills an array for the driver.
import { is, Param, Placeholder, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Database, Executor } from './client.js';
import { directRunnerOf } from './direct-runner.js';

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
  toSQL(): { sql: string; params: unknown[] };
}

/** Builds a query of one shape, taking each input through `param` (a placeholder, or the value itself). */
export type ShapedQuery<Result> = (db: Executor, param: (name: string) => unknown) => Preparable<Result>;

/** Statement names by shape: one prepared statement per shape, database and connection. */
const shapeNames = new Map<string, string>();

function nameOf(shape: string): string {
  let name = shapeNames.get(shape);
  if (!name) shapeNames.set(shape, (name = `shaped_${shapeNames.size + 1}`));
  return name;
}

/**
 * Runs a query whose text depends on a few choices (`shape`, a key naming them all) and whose inputs
 * are `values`: prepared once per shape and database outside transactions (its inputs as placeholders),
 * built with the values themselves inside one. Inputs that vary per call (ids, times) must be values,
 * never column defaults, which a prepared query would evaluate once.
 */
export async function executeShaped<Result>(executor: Executor, shape: string, build: ShapedQuery<Result>, values: Record<string, unknown>): Promise<Result> {
  const name = nameOf(shape);
  const prepared = preparedOn(executor, name, (db) => build(db, (param) => sql.placeholder(param)).prepare(name));
  return prepared ? prepared.execute(values) : build(executor, (param) => values[param]);
}

// Shaped statements run by hand.

/**
 * A statement's inputs by name. A name `group.key` reads `inputs[group][key]`, so a caller hands over
 * the objects it has (the record's columns, say) rather than copying each into a flat one per run.
 */
export type ShapedInputs = Record<string, unknown>;

/** Where an input named `group.key` (or `key`) is found in ShapedInputs. */
interface InputPlace {
  group?: string;
  key: string;
}

function placeOf(name: string): InputPlace {
  const dot = name.indexOf('.');
  return dot < 0 ? { key: name } : { group: name.slice(0, dot), key: name.slice(dot + 1) };
}

function read(inputs: ShapedInputs, place: InputPlace): unknown {
  return place.group === undefined ? inputs[place.key] : (inputs[place.group] as Record<string, unknown> | undefined)?.[place.key];
}

/** One parameter of a statement run by hand: an input, through its column's encoding when it has one. */
type ParamPlan = (InputPlace & { encode?: (value: unknown) => unknown }) | { literal: unknown };

interface DirectPlan {
  name: string;
  text: string;
  params: ParamPlan[];
}

const plans = new WeakMap<Database, Map<string, DirectPlan>>();

/** The text and parameter plan of a shape, from drizzle's query built once with placeholders. */
function planOf(db: Database, shape: string, build: ShapedQuery<unknown>): DirectPlan {
  let byShape = plans.get(db);
  if (!byShape) plans.set(db, (byShape = new Map()));
  let plan = byShape.get(shape);
  if (plan) return plan;
  const query = build(db, (param) => sql.placeholder(param)).toSQL();
  const params = query.params.map((param): ParamPlan => {
    const placeholder = is(param, Param) && is(param.value, Placeholder) ? param.value : is(param, Placeholder) ? param : undefined;
    if (!placeholder) return { literal: param };
    const place = placeOf(placeholder.name);
    // The column's encoding, as drizzle's own fillPlaceholders applies it (JSON text, a timestamp's ISO text).
    if (is(param, Param)) return { ...place, encode: (value) => param.encoder.mapToDriverValue(value) };
    return place;
  });
  byShape.set(shape, (plan = { name: nameOf(shape), text: query.sql, params }));
  return plan;
}

function paramsOf(plan: DirectPlan, inputs: ShapedInputs): unknown[] {
  const params = new Array<unknown>(plan.params.length);
  for (let index = 0; index < plan.params.length; index++) {
    const param = plan.params[index]!;
    if ('literal' in param) {
      params[index] = param.literal;
      continue;
    }
    const value = read(inputs, param);
    params[index] = param.encode ? param.encode(value) : value;
  }
  return params;
}

/**
 * Runs a statement of a shape (as executeShaped) whose every run counts: outside a transaction its text
 * and parameter plan are taken from drizzle once per shape and database, and each run fills the
 * parameters from `inputs` and hands them to the driver as a named statement, with none of drizzle's
 * per-run work (placeholders looked up, results mapped through the fields, the query's cache and span).
 * Rows come back as objects of `columns`, the statement's result columns in their order, each value as
 * the driver reads it (a numeric as text): callers convert what they read. Inside a transaction the
 * statement is built with the values, as executeShaped does.
 */
export async function runShaped<Row extends Record<string, unknown>>(
  executor: Executor,
  shape: string,
  build: ShapedQuery<unknown>,
  inputs: ShapedInputs,
  columns: readonly (keyof Row & string)[],
): Promise<Row[]> {
  const runner = executor instanceof PgTransaction ? undefined : directRunnerOf(executor);
  if (!runner) return (await build(executor, (name) => read(inputs, placeOf(name)))) as Row[];
  const plan = planOf(executor as Database, shape, build);
  const rows = await runner(plan.name, plan.text, paramsOf(plan, inputs));
  return rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let index = 0; index < columns.length; index++) row[columns[index]!] = values[index];
    return row as Row;
  });
}
