// Planner statistics for the embedded database. A PostgreSQL server's autovacuum analyzes a table once
// about a tenth of it has changed; PGlite runs no autovacuum, so its statistics would stay as first
// taken (an empty vault) and searches would scan everything: vector search took 187 ms instead of 2 ms
// at 100k chunks. Here the same rule as autovacuum's defaults, run by a job every minute and after each
// ingestion.
import type { DatabaseHandle } from './client.js';

/** autovacuum_analyze_threshold and autovacuum_analyze_scale_factor, PostgreSQL's defaults. */
export const ANALYZE_THRESHOLD = 50;
export const ANALYZE_SCALE_FACTOR = 0.1;

/** Analyzes the tables changed enough since their last analysis (PGlite only); returns their names. */
export async function analyzeStaleTables(database: Pick<DatabaseHandle, 'kind' | 'executeSql'>): Promise<string[]> {
  if (database.kind !== 'pglite') return [];
  // Change counts reach the statistics at most once a second: ask for them now (seen by the next statement).
  await database.executeSql('select pg_stat_force_next_flush()');
  const { rows } = await database.executeSql(
    `select relname from pg_stat_user_tables
      where schemaname = 'public' and n_mod_since_analyze > $1::float8 + $2::float8 * n_live_tup
      order by relname`,
    [ANALYZE_THRESHOLD, ANALYZE_SCALE_FACTOR],
  );
  const names = rows.map((row: { relname: string }) => row.relname);
  for (const name of names) await database.executeSql(`analyze "${name.replace(/"/g, '""')}"`);
  return names;
}
