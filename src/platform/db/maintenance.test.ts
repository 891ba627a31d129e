// Planner statistics on the embedded database: a table changed by more than autovacuum's rule is
// analyzed, once; one barely changed is left alone; on a server (autovacuum's job) nothing is done.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { ANALYZE_THRESHOLD, analyzeStaleTables } from './maintenance.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
  await database.executeSql('create table stats_probe (id int primary key, note text)');
  await database.executeSql('create table stats_quiet (id int primary key)');
});
afterAll(() => database?.close());

const lastAnalyze = async (table: string) =>
  (await database.executeSql('select last_analyze from pg_stat_user_tables where relname = $1', [table])).rows[0]?.last_analyze ?? null;

describe('analyzeStaleTables', () => {
  it.runIf(!process.env.TEST_DATABASE_URL)('analyzes a table changed past the threshold on PGlite, then not again', async () => {
    await database.executeSql(`insert into stats_probe select i, 'row ' || i from generate_series(1, ${ANALYZE_THRESHOLD + 100}) as i`);
    await database.executeSql('insert into stats_quiet values (1), (2)');
    expect(await lastAnalyze('stats_probe')).toBeNull();

    const analyzed = await analyzeStaleTables(database);
    expect(analyzed).toContain('stats_probe');
    expect(analyzed).not.toContain('stats_quiet');
    expect(await lastAnalyze('stats_probe')).not.toBeNull();
    expect(await lastAnalyze('stats_quiet')).toBeNull();
    // The planner now knows the table's size.
    const { rows } = await database.executeSql(`select reltuples::int as n from pg_class where relname = 'stats_probe'`);
    expect(rows[0].n).toBe(ANALYZE_THRESHOLD + 100);

    expect(await analyzeStaleTables(database)).not.toContain('stats_probe');
  });

  it.runIf(process.env.TEST_DATABASE_URL)('leaves a server to its autovacuum', async () => {
    await database.executeSql(`insert into stats_probe select i, 'x' from generate_series(1000, 2000) as i`);
    expect(await analyzeStaleTables(database)).toEqual([]);
  });
});
