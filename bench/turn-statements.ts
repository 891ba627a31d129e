// bench/turn-statements: the CPU of a turn's two statements (the opening with its hold, the settle with its
// charge) on the service's own database layer, without HTTP or a model: what the embedded database's
// thread and the main thread's side of it cost a turn. BENCH_TURNS (3,000) turns, BENCH_CONCURRENCY (100)
// at a time (each opens, waits a tick, settles, and starts the next), spread over BENCH_PEOPLE (20) people
// of one twin, each in a new conversation as bench:stream's clients ask. Counts the process's CPU (both
// threads) per turn after a warm-up of a tenth of the turns, and the database thread's own share.
// BENCH_ANSWER_MS=1000 runs each answer about a second (half to one and a half), as bench:stream's (about
// 100 turns a second at 100 at a time: the statements then come mostly alone, not in groups).
//   npx tsx bench/turn-statements.ts                         (PGlite in a data folder, as deployed)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/turn-statements.ts (the client's side only)
//   BENCH_ROUNDS=3 …  (rounds after one warm-up; each prints its figure)
//   BENCH_DROP=conversations_institution_activity_idx … (rounds alternate with and without those indexes)
//   BENCH_FREE=1 …  (free turns: no hold, nothing charged)
//   BENCH_GROUPS=alternate …  (rounds alternate settles in groups, as the service writes them (A), and
//                              lone ones (B); BENCH_GROUPS=off: lone ones only)
// Figures: docs/performance.md ("CPU an answer against the bare relay and the floor").
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTwin, buildUser } from '../test/support/factories.js';
import { openDatabase } from '../src/platform/db/client.js';
import { createSettleGroups } from '../src/modules/conversations/settle-groups.js';
import { settleTurn } from '../src/modules/conversations/turn-end.js';
import { startRecord } from '../src/modules/conversations/turn-record.repo.js';
import { payerFor } from '../src/modules/credits/payer.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 100);
const PEOPLE = Number(process.env.BENCH_PEOPLE ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** How long each turn's answer runs between its opening and its settle: 0, a tick (statements come in groups). */
const ANSWER_MS = Number(process.env.BENCH_ANSWER_MS ?? 0);
const serverUrl = process.env.BENCH_DATABASE_URL || undefined;
const dataDir = serverUrl ? undefined : mkdtempSync(path.join(os.tmpdir(), 'dt-turn-statements-'));
const database = await openDatabase({ dataDir, databaseUrl: serverUrl, migrate: true });
const db = database.db;
// BENCH_DROP=index,index …: rounds alternate with those indexes and without them (dropped before the
// round, made again after it): what they cost the turn's writes, in the same process.
const DROP = (process.env.BENCH_DROP ?? '').split(',').filter(Boolean);
const definitions = await Promise.all(
  DROP.map(async (name) => (await database.executeSql(`select indexdef from pg_indexes where indexname = $1`, [name])).rows[0]?.indexdef as string),
);
if (definitions.some((definition) => !definition)) throw new Error(`no such index among ${DROP.join(', ')}`);
// BENCH_B_SQL=… and BENCH_A_SQL=…: rounds alternate between the database as it is (A) and as BENCH_B_SQL
// makes it (B; BENCH_A_SQL undoes it after each B round): a change's cost to the turn, in the same process.
const [B_SQL, A_SQL] = [process.env.BENCH_B_SQL, process.env.BENCH_A_SQL];
const twin = await buildTwin(db);
const people = await Promise.all(Array.from({ length: PEOPLE }, () => buildUser(db, { twin, credits: 1_000_000_000 }).then((built) => built.user)));
const answer = Array.from({ length: 40 }, (_, i) => `piece ${i} `).join('');
/** Free turns, as a deployment on the built-in model (or any unpriced one) runs them. */
const FREE = process.env.BENCH_FREE === '1';
const GROUPS = process.env.BENCH_GROUPS ?? 'on';
/** Turns between their opening and the end of their settle: the service's journal counts them so. */
let inProgress = 0;
const settles = createSettleGroups(db, { inProgress: () => inProgress, log: { warn: (details, message) => console.warn(message, details) } });
let grouped = GROUPS !== 'off';

async function turn(i: number): Promise<void> {
  const person = people[i % PEOPLE];
  const payer = payerFor(twin, { kind: 'person', userId: person.id });
  const hold = FREE ? undefined : { account: 'user' as const, amount: 0.5 };
  const opened = await startRecord(db, { twinId: twin.id, userId: person.id, question: 'Go', assistantName: 'Bench', models: ['bench-model'], hold });
  inProgress++;
  try {
    await new Promise((resolve) => (ANSWER_MS > 0 ? setTimeout(resolve, answerMs()) : setImmediate(resolve)));
    const record = { answer, status: 'complete' as const, usage: { inputTokens: 20, outputTokens: 40 }, models: ['bench-model'] };
    await settleTurn(db, { payer, opened, cost: FREE ? 0 : 0.001, record, ...(grouped ? { groups: settles } : {}) });
  } finally {
    inProgress--;
  }
}

/** CPU ms of each thread of this process (Linux), by name and id. */
function threads(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(`${name}:${tid}`, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
  }
  return ticks;
}

/**
 * An answer's length: BENCH_ANSWER_MS give or take half of it, so that turns started together drift apart as
 * bench:stream's clients do (each one's statements then mostly come alone, as in the service). Without the
 * spread the turns stayed in step and their statements came in groups of up to 16 (performance.md).
 */
const answerMs = () => ANSWER_MS * (0.5 + Math.random());

async function run(turns: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      // Each of the CONCURRENCY starts somewhere within an answer's length, not all at once.
      if (ANSWER_MS > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * ANSWER_MS));
      while (next < turns) await turn(next++);
    }),
  );
}

await run(Math.ceil(TURNS / 10)); // warm-up: the statements kept, the optimizing compiler's first pass
for (let round = 1; round <= ROUNDS; round++) {
  const without = (DROP.length > 0 || Boolean(B_SQL) || GROUPS === 'alternate') && round % 2 === 0;
  if (GROUPS === 'alternate') grouped = !without;
  if (without) for (const name of DROP) await database.executeSql(`drop index ${name}`);
  if (without && B_SQL) await database.executeSql(B_SQL);
  const before = process.cpuUsage();
  const threadsBefore = threads();
  const started = performance.now();
  await run(TURNS);
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000;
  const busiest = [...threads()]
    .map(([name, at]) => [name, at - (threadsBefore.get(name) ?? 0)] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name, at]) => `${name.replace(/:\d+$/, '')} ${(at / TURNS).toFixed(3)}`);
  if (without) for (const definition of definitions) await database.executeSql(definition);
  if (without && A_SQL) await database.executeSql(A_SQL);
  console.log(
    `round ${round}${DROP.length || B_SQL || GROUPS === 'alternate' ? (without ? ' (B)' : ' (A)') : ''}: ${TURNS} turns in ${((performance.now() - started) / 1000).toFixed(1)} s, ${(ms / TURNS).toFixed(3)} ms of CPU a turn ` +
      `(by thread: ${busiest.join(', ')}) (load ${os.loadavg()[0].toFixed(1)})`,
  );
}
// How the turn's updates were written: HOT (the row's indexes untouched) or as new index entries; the dead
// row versions left (PGlite runs no autovacuum) and what the table takes with its indexes.
await database.executeSql('select pg_stat_force_next_flush()');
const stats = await database.executeSql(
  `select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_dead_tup, pg_table_size(relid) as heap, pg_indexes_size(relid) as indexes
     from pg_stat_user_tables where relname in ('users', 'history', 'conversations', 'credit_ledger') order by relname`,
);
const mb = (bytes: string) => `${(Number(bytes) / 2 ** 20).toFixed(1)} MB`;
for (const row of stats.rows) {
  console.log(`${row.relname}: ${row.n_tup_ins} inserted, ${row.n_tup_upd} updated, ${row.n_tup_hot_upd} of them HOT; ${row.n_dead_tup} dead; table ${mb(row.heap)}, indexes ${mb(row.indexes)}`);
}
await database.close();
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
