// The bare relay plus the two rows a turn must write (BENCH_FLOOR=1 in bench/stream-overhead): before the
// model is called, a record is inserted (its commit not waited for, as the turn's opening does); once the
// answer has ended, the record is updated with its text (a waited commit, as the settle). Both go through the
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
      const upstream = http.request(model, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.socket?.setNoDelay(true);
        const pieces: Buffer[] = [];
        answer.on('data', (piece: Buffer) => pieces.push(piece));
        answer.pipe(res, { end: false });
        answer.on('end', () => {
          database.executeSql(SETTLE, [id, answerText(Buffer.concat(pieces).toString('utf8')), 'complete']).then(
            () => res.end(),
            () => res.destroy(),
          );
        });
      });
      upstream.on('error', () => res.destroy());
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
