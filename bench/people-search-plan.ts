// bench/people-search-plan: what the people list's statements (GET /api/admin/users) do with
// BENCH_LIST_PEOPLE (10,000) accounts, all members of one twin: EXPLAIN ANALYZE of the page and of the
// count, for a super admin (every account) and a twin's administrator (members of its twins), with and
// without the searches bench/web.ts makes, planned as listUsers plans them. PGlite by default; BENCH_DATABASE_URL for a fresh PostgreSQL
// database (created and dropped here).
//   npx tsx bench/people-search-plan.ts
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../src/platform/db/client.js';
import { peopleListQueries, SEARCH_OPERATOR_COST, TRIGRAM } from '../src/modules/admin-users/admin-users.repo.js';

const PEOPLE = Math.max(1, Number(process.env.BENCH_LIST_PEOPLE ?? 10_000));
const SEARCHES = [undefined, 'listed-04321@list.example.test', 'Given777', 'hopper', 'listed-09', '@list.example'];
const TWIN = 'plan-twin'.padEnd(24, '0');

async function open(): Promise<{ handle: DatabaseHandle; done: () => Promise<void> }> {
  const serverUrl = process.env.BENCH_DATABASE_URL;
  if (!serverUrl) {
    const handle = await openDatabase({ memory: true });
    return { handle, done: () => handle.close() };
  }
  const name = `people_plan_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
  return {
    handle,
    done: async () => {
      await handle.close();
      await admin.query(`drop database ${name}`);
      await admin.end();
    },
  };
}

async function main(): Promise<void> {
  const { handle, done } = await open();
  try {
    await handle.executeSql(`insert into institutions (id, name) values ('${TWIN}', 'Plan')`, []);
    await handle.executeSql(
      `insert into users (id, email, fname, lname, created_at)
       select lpad(i::text, 24, '0'), 'listed-' || lpad(i::text, 5, '0') || '@list.example.test', 'Given' || i,
              (array['Lovelace','Hopper','Turing','Noether','Curie','Shannon','Hamilton','Ritchie','Liskov','Knuth'])[i % 10 + 1],
              now() - (${PEOPLE} - i) * interval '1 millisecond'
       from generate_series(0, ${PEOPLE - 1}) i`,
      [],
    );
    await handle.executeSql(`insert into memberships (id, institution_id, user_id) select 'm' || substr(id, 2), '${TWIN}', id from users`, []);
    await handle.executeSql('analyze', []);
    for (const scope of ['all', [TWIN]] as const) {
      for (const search of SEARCHES) {
        // As listUsers plans a search of a trigram or more (one connection here: PGlite, or a pool of one).
        const cost = search && search.length >= TRIGRAM ? SEARCH_OPERATOR_COST : 'default';
        await handle.executeSql(`set cpu_operator_cost to ${cost}`, []);
        const queries = peopleListQueries(handle.db, { scope: scope === 'all' ? 'all' : [...scope], search }, { offset: 20, limit: 20 });
        for (const [which, query] of Object.entries(queries)) {
          const { sql: text, params } = query.toSQL();
          const plan = await handle.executeSql(`explain (analyze, costs off) ${text}`, params);
          console.log(`\n## ${scope === 'all' ? 'super admin' : "twin's administrator"}, ${which}, search ${JSON.stringify(search ?? null)}`);
          for (const row of plan.rows as Array<{ 'QUERY PLAN': string }>) console.log(row['QUERY PLAN']);
        }
      }
    }
  } finally {
    await done();
  }
}

await main();
