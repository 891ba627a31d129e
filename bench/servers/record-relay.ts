// The bare relay plus the two rows a turn must write (BENCH_FLOOR=1 in bench/stream-overhead): before the
// model is called, a record is inserted (its commit not waited for, as the turn's opening does); once the
// answer has ended, the record is updated with its text (a waited commit, as the settle), in groups as the
// service writes the settles of free turns (settle-groups.ts: while other answers are open, up to its
// window, one statement for the group; alone when no other answer is open). Both go through the
// service's own database layer (src/platform/db): the embedded database's thread (PGlite in a worker,
// kept statements committed in groups), or with BENCH_DATABASE_URL the PostgreSQL server, in a table of
// this process's own. No authentication, no hold, no framing: what no service that records its turns on
// that database can go below. Reports its URL to the parent.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/platform/db/client.js';
import { newId } from '../../src/platform/ids/ids.js';
import { SETTLE_GROUP_MAX, SETTLE_GROUP_WINDOW_MS } from '../../src/modules/conversations/settle-groups.js';

const model = new URL(`${process.env.BENCH_MODEL_URL}/chat/completions`);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4_096 });
const serverUrl = process.env.BENCH_DATABASE_URL || undefined;
const dataDir = serverUrl ? undefined : mkdtempSync(path.join(os.tmpdir(), 'dt-floor-'));
const database = await openDatabase({ dataDir, databaseUrl: serverUrl, migrate: false });
const table = `turn_records_${process.pid}`;
await database.executeSql(`create table ${table} (
  id char(24) primary key, question text not null, answer text not null default '', status text not null default 'streaming',
  created_at timestamptz not null default now(), updated_at timestamptz not null default now())`);

const OPEN = `with commit_mode as (select set_config('synchronous_commit', 'off', true) as mode)
  insert into ${table} (id, question) values ($1, $2) returning (select mode from commit_mode)`;
const SETTLE = `update ${table} set answer = $2, status = $3, updated_at = now() where id = $1 and status = 'streaming'`;
const SETTLE_GROUP = `update ${table} set answer = settled.answer, status = settled.status, updated_at = now()
  from (select * from jsonb_to_recordset($1::text::jsonb) as input(id char(24), answer text, status text) where octet_length(input.id) = 24) settled
  where ${table}.id = settled.id and (${table}.status = 'streaming') is true`;

/** Answers open now (the service's journal counts them so), and the settles waiting for their group. */
let open = 0;
let waiting: Array<{ id: string; answer: string; done: () => void; failed: () => void }> = [];
let timer: NodeJS.Timeout | undefined;

function settle(id: string, answer: string, done: () => void, failed: () => void): void {
  waiting.push({ id, answer, done, failed });
  if (waiting.length >= SETTLE_GROUP_MAX || open - waiting.length <= 0) writeGroup();
  else timer ??= setTimeout(writeGroup, SETTLE_GROUP_WINDOW_MS);
}

function writeGroup(): void {
  clearTimeout(timer);
  timer = undefined;
  const group = waiting;
  waiting = [];
  const written =
    group.length === 1
      ? database.executeSql(SETTLE, [group[0]!.id, group[0]!.answer, 'complete'])
      : database.executeSql(SETTLE_GROUP, [JSON.stringify(group.map(({ id, answer }) => ({ id, answer, status: 'complete' })))]);
  written.then(
    () => group.forEach((entry) => entry.done()),
    () => group.forEach((entry) => entry.failed()),
  );
}

/**
 * The answer's text, as the service keeps it on the record (about 1 KB of the bench's answer), not the
 * model's whole event stream (about 6 KB, which the database compresses and stores apart).
 */
const CONTENT = /"content":"((?:[^"\\]|\\.)*)"/g;
function answerText(stream: string): string {
  let text = '';
  for (const [, literal] of stream.matchAll(CONTENT)) text += literal.includes('\\') ? (JSON.parse(`"${literal}"`) as string) : literal;
  return text;
}

const server = http.createServer((req, res) => {
  const id = newId();
  database.executeSql(OPEN, [id, 'A question']).then(
    () => {
      open++;
      const upstream = http.request(model, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.socket?.setNoDelay(true);
        const pieces: Buffer[] = [];
        answer.on('data', (piece: Buffer) => pieces.push(piece));
        answer.pipe(res, { end: false });
        answer.on('end', () => {
          settle(
            id,
            answerText(Buffer.concat(pieces).toString('utf8')),
            () => {
              open--;
              res.end();
            },
            () => {
              open--;
              res.destroy();
            },
          );
        });
      });
      upstream.on('error', () => {
        open--;
        res.destroy();
      });
      req.pipe(upstream);
    },
    () => res.destroy(),
  );
});
server.keepAliveTimeout = 65_000;
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
});
process.on('SIGTERM', () => {
  server.close();
  const dropped = serverUrl ? database.executeSql(`drop table if exists ${table}`) : Promise.resolve();
  void dropped.finally(() => database.close()).finally(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});
