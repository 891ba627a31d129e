// The service killed with SIGKILL mid-work and started again on the same data: an ingestion
// killed mid-embed ends ready within the bound with exactly the chunks of a clean ingestion; every write
// answered 2xx before a kill mid-burst is there. Embedded shape: one process on a PGlite folder, killed and
// restarted. Scaled shape (TEST_DATABASE_URL): an API process and workers on PostgreSQL + Redis; the
// worker holding the job is killed and another takes it over while it stays down. Starting a process
// takes most of the time (tens of seconds on a loaded machine), hence the long test timeouts.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_TURN_ERROR } from '../src/modules/conversations/turn-holds.js';
import { chunkText, sanitizeChunk } from '../src/modules/files/chunking.js';
import type { DatabaseHandle } from '../src/platform/db/client.js';
import { startFakeModelServer, type FakeModelServer } from './support/fake-model-server.js';
import { readSse } from './support/sse-client.js';
import { collect, connectSocket, register } from './support/socket-client.js';
import { api, deployForCrashes, sampleText, signInAdmin, uploadBytes, uploadText, waitForValue, type CrashDeployment } from './support/crash.js';
import type { ServiceProcess } from './support/processes.js';

/** Short for the test: a process unheard for 2 s is gone (the default is 15 s). */
const TIMEOUT_SECONDS = 2;
/** What the README promises with the test's timeout: taken back within timeout + a beat, run at once. */
const TAKE_BACK_BOUND_MS = (TIMEOUT_SECONDS + TIMEOUT_SECONDS / 3) * 1000 + 2_000;
const TEXT = sampleText(400_000, 'crash');
const EXPECTED_CHUNKS = chunkText(TEXT).map(sanitizeChunk).filter((chunk) => chunk.length > 0).length;

let deployment: CrashDeployment;
let model: FakeModelServer;

beforeAll(async () => {
  model = await startFakeModelServer();
  deployment = await deployForCrashes({
    PROCESS_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'sk-test',
    DEFAULT_MODEL: 'fake-chat',
    DEFAULT_PRICE_IN: '1',
    DEFAULT_PRICE_OUT: '1',
    STARTING_CREDITS: '100',
  });
}, 60_000);

// A test that fails midway leaves its processes running on the data; the next test starts clean.
afterEach(async () => {
  await deployment?.stopAll();
});

afterAll(async () => {
  await deployment?.close();
  await model?.close();
});

describe(`the service killed mid-work on ${process.env.TEST_DATABASE_URL ? 'PostgreSQL + Redis' : 'PGlite'}`, () => {
  it('finishes an ingestion killed mid-embed within the bound, with the chunks of a clean ingestion and nothing left over', async () => {
    const first = await deployment.start(deployment.scaled ? 'api' : 'all');
    const worker = deployment.scaled ? await deployment.start('worker') : first;
    const token = await signInAdmin(first.url);
    const fileId = await uploadText(first.url, token, 'long.txt', TEXT);
    const seen: string[] = [];
    await waitForValue('the embed stage', async () => {
      const file = (await api(first.url, `/api/user/files/${fileId}`, token)).body.data;
      seen.push(`${file.status}/${file.stage}/${file.progress}`);
      if (file.status !== 'processing') throw new Error(`ingestion ended before the kill: ${seen.join(' ')}`);
      return file.stage === 'embed' && file.progress > 40 ? file : undefined;
    }, 30_000, 10);

    const url = await killTheWorker(first, worker);
    const resumedFrom = Date.now();
    const file = await fileReady(url, token, fileId, 30_000);
    const tookMs = Date.now() - resumedFrom;

    expect(file.chunkCount).toBe(EXPECTED_CHUNKS);
    // Taken back within the bound, then ingested once more (a few seconds on a loaded machine at most).
    expect(tookMs).toBeLessThan(TAKE_BACK_BOUND_MS + 15_000);
    await expectCleanIngestion(fileId);
  }, 420_000);

  it('finishes an ingestion killed at its chunk stage and again at its finalize, with the chunks of a clean ingestion', async () => {
    // Each process kills itself at the stage (FAULT_KILL_AT), so the kills land exactly there.
    const atChunk = { FAULT_KILL_AT: 'ingest:chunk' };
    const atFinalize = { FAULT_KILL_AT: 'ingest:finalize' };
    const first = await deployment.start(deployment.scaled ? 'api' : 'all', deployment.scaled ? {} : atChunk);
    const worker = deployment.scaled ? await deployment.start('worker', atChunk) : first;
    const token = await signInAdmin(first.url);
    const fileId = await uploadText(first.url, token, 'stages.txt', TEXT);
    expect(await worker.exited).toBeNull(); // killed by a signal, at the chunk stage

    const second = await deployment.start(deployment.scaled ? 'worker' : 'all', atFinalize, { mayDie: true });
    await second.exited; // took the job back, wrote every chunk, and was killed before the file turned ready
    if (!deployment.scaled) {
      await deployment.inspect(async (database) => {
        const { rows } = await database.executeSql(`select status, stage from files where id = $1`, [fileId]);
        expect(rows).toEqual([{ status: 'processing', stage: 'finalize' }]);
        expect((await chunkGenerations(database, fileId)).map((row: { chunks: number }) => row.chunks)).toEqual([EXPECTED_CHUNKS]);
      });
    }

    const third = await deployment.start(deployment.scaled ? 'worker' : 'all');
    const url = deployment.scaled ? first.url : third.url;
    const file = await fileReady(url, token, fileId, 60_000);
    expect(file).toMatchObject({ stage: 'finalize', progress: 100, chunkCount: EXPECTED_CHUNKS });
    await expectCleanIngestion(fileId);
  }, 420_000);

  it('keeps every write answered 2xx before a kill in the middle of a burst', async () => {
    const service = await deployment.start(deployment.scaled ? 'api' : 'all');
    const other = deployment.scaled ? await deployment.start('api') : undefined;
    const token = await signInAdmin(service.url);
    const answered: string[] = [];
    const burst = Array.from({ length: 20 }, async (_, i) => {
      const created = await api(service.url, '/api/user/files/collections', token, { name: `burst ${i}` }).catch(() => undefined);
      if (created && created.status >= 200 && created.status < 300) answered.push(created.body.data?._id ?? created.body._id ?? `burst ${i}`);
    });
    await waitForValue('half of the burst answered', async () => (answered.length >= 5 ? true : undefined), 10_000, 1);
    await deployment.kill(service);
    await Promise.all(burst);
    const url = other ? other.url : (await deployment.start('all')).url;

    const listed = (await api(url, '/api/user/files/collections', token)).body.data as Array<{ _id: string; name: string }>;
    expect(answered.length).toBeGreaterThanOrEqual(5);
    for (const id of answered) expect(listed.map((collection) => collection._id)).toContain(id);
    await deployment.stopAll();
  }, 300_000);
});

describe(`an export killed mid-archive on ${process.env.TEST_DATABASE_URL ? 'PostgreSQL + Redis' : 'PGlite'}`, () => {
  it('publishes one whole archive and one mail after the kill, and leaves no half archive behind', async () => {
    const first = await deployment.start(deployment.scaled ? 'api' : 'all');
    const worker = deployment.scaled ? await deployment.start('worker') : first;
    const token = await signInAdmin(first.url);
    // Images are stored and listed without chunks: ready soon, and the export of their bytes is long.
    const files = Array.from({ length: 24 }, (_, i) => ({ name: `photo-${i}.png`, bytes: Buffer.concat([PNG_SIGNATURE, randomBytes(2 * 1024 * 1024)]) }));
    const ids = [];
    for (const file of files) ids.push(await uploadBytes(first.url, token, file.name, file.bytes, 'image/png'));
    for (const id of ids) {
      await waitForValue('the image ready', async () => ((await api(first.url, `/api/user/files/${id}`, token)).body.data.status === 'ready' ? true : undefined), 60_000);
    }

    const started = await api(first.url, '/api/user/data/export', token, {});
    expect(started.status).toBe(202);
    const exportId = started.body.exportId as string;
    await waitForValue('the export half-way', async () => {
      const current = (await api(first.url, `/api/user/data/export/${exportId}`, token)).body;
      if (current.status === 'ready') throw new Error('the export ended before the kill');
      return current.status === 'running' && current.progress >= 20 ? current : undefined;
    }, 60_000, 10);

    const url = await killTheWorker(first, worker);
    const ready = await waitForValue('the export ready', async () => {
      const current = (await api(url, `/api/user/data/export/${exportId}`, token)).body;
      if (current.status === 'failed') throw new Error('the export failed');
      return current.status === 'ready' ? current : undefined;
    }, 90_000, 100);
    expect(ready).toMatchObject({ progress: 100, expired: false });

    // One mail, whose link downloads the whole archive: every file, byte for byte.
    // (The mail follows the publishing: ready first, then the link is made and mailed.)
    const outbox = path.join(deployment.dataDir, 'outbox');
    const mailedLinks = () =>
      (existsSync(outbox) ? readdirSync(outbox) : []).filter((name) => name.endsWith('.eml')).map((name) => exportLink(readFileSync(path.join(outbox, name), 'utf8'))).filter(Boolean);
    const link = new URL(await waitForValue('the mail', async () => mailedLinks()[0], 30_000));
    const download = await fetch(`${url}${link.pathname}${link.search}`);
    expect(download.status).toBe(200);
    const entries = unzipSync(new Uint8Array(await download.arrayBuffer()));
    for (const file of files) expect(Buffer.from(entries[`files/${file.name}`] ?? []).equals(file.bytes)).toBe(true);
    const archivedNames = (JSON.parse(strFromU8(entries['files.json'])) as Array<{ originalname: string }>).map((file) => file.originalname);
    expect(archivedNames).toEqual(expect.arrayContaining(files.map((file) => file.name)));
    await deployment.stopAll();
    expect(mailedLinks()).toHaveLength(1);
    await deployment.inspect(async (database) => {
      expect(await unfinishedJobs(database)).toEqual([]);
      expect(await heldAttempts(database)).toEqual([]);
    });
    // Only the published archive is left of the export in storage: the killed attempt's partial file is gone.
    const listed = (folder: string) => (existsSync(folder) ? readdirSync(folder, { recursive: true }) : []);
    expect(listed(path.join(deployment.dataDir, 'files', 'exports'))).toEqual([exportId]);
    expect(listed(path.join(deployment.dataDir, 'files', '.partial')).filter((name) => String(name).endsWith('.tmp'))).toEqual([]);
  }, 420_000);
});

/**
 * Kills the process running the job: on the scaled shape another worker is started first and the one
 * running the job dies and stays down; on the embedded one the process dies and is started again.
 * Answers the URL to ask from then on.
 */
async function killTheWorker(first: ServiceProcess, worker: ServiceProcess): Promise<string> {
  if (deployment.scaled) {
    await deployment.start('worker');
    await deployment.kill(worker);
    return first.url;
  }
  await deployment.kill(first);
  return (await deployment.start('all')).url;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The download link of an export mail (.eml, its body possibly quoted-printable). */
function exportLink(eml: string): string | undefined {
  const body = eml.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');
  return body.match(/https?:\/\/\S+\/api\/user\/data\/export\/[0-9a-f]{24}\/download\?token=[^\s"<]+/)?.[0];
}


/** Asks over SSE; resolves with the pieces once two have arrived (the model then stalls). */
async function askOverSse(url: string, token: string, question: string): Promise<string[]> {
  const response = await fetch(`${url}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs: {} }),
  });
  const frames = readSse(response);
  const sent: string[] = [];
  while (sent.length < 2) {
    const frame = await frames.next();
    if (!frame) throw new Error('the stream ended early');
    if (frame.type === 'stream') sent.push(String(frame.delta));
  }
  void frames.rest().catch(() => {});
  return sent;
}

/** Asks over Socket.IO (the Q&A POST names the socket); resolves with the pieces once two have arrived. */
async function askOverSocket(url: string, token: string, question: string): Promise<string[]> {
  const userId = (await api(url, '/api/user/refresh/profile', token, {})).body.profile._id as string;
  const socket = await connectSocket(url, { auth: { token } });
  if ((await register(socket, userId)).event !== 'connect_success') throw new Error('REGISTER refused');
  const pieces = collect<{ delta: string }>(socket, 'RECEIVE_STREAM');
  void api(url, '/api/ai/personal/qanda', token, { inputs: [question], requestArgs: { socketId: socket.id } }).catch(() => {});
  await waitForValue('two pieces on the socket', async () => (pieces.length >= 2 ? true : undefined), 30_000, 10);
  socket.on('disconnect', () => socket.close());
  return pieces.slice(0, 2).map((piece) => piece.delta);
}

describe(`an answer killed mid-stream on ${process.env.TEST_DATABASE_URL ? 'PostgreSQL + Redis' : 'PGlite'}`, () => {
  it.each([
    ['SSE', askOverSse],
    ['Socket.IO', askOverSocket],
  ] as const)('ends as interrupted (%s), with the part that was sent, uncharged, its hold given back', async (_transport, ask) => {
    const service = await deployment.start(deployment.scaled ? 'api' : 'all');
    const other = deployment.scaled ? await deployment.start('api') : undefined;
    const token = await signInAdmin(service.url);
    const creditsBefore = (await api(service.url, '/api/user/refresh/profile', token, {})).body.profile.credits;
    model.enqueue({ chunks: ['The part ', 'that was sent', ' and never this'], stallAfter: 2, usage: { prompt_tokens: 10, completion_tokens: 10 } });
    const sent = await ask(service.url, token, `A long question over ${_transport}`);
    // The journal saves the answer so far of a turn running 2 s or longer, every 2 s.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await deployment.kill(service);

    const url = other ? other.url : (await deployment.start('all')).url;
    const resumedFrom = Date.now();
    const record = await waitForValue('the record settled', async () => {
      const listed = (await api(url, '/api/user/history', token)).body.data as Array<{ _id: string; question: string; status: string }>;
      const mine = listed.find((entry) => entry.question === `A long question over ${_transport}`);
      return mine && mine.status !== 'streaming' ? (await api(url, `/api/user/history/${mine._id}`, token)).body.data : undefined;
    }, 30_000);

    expect(record).toMatchObject({ status: 'failed', answer: sent.join(''), error: INTERRUPTED_TURN_ERROR, credits: 0 });
    expect(Date.now() - resumedFrom).toBeLessThan(TAKE_BACK_BOUND_MS);
    expect((await api(url, '/api/user/refresh/profile', token, {})).body.profile.credits).toBe(creditsBefore);
    await deployment.stopAll();
    await deployment.inspect(async (database) => {
      const { rows: streaming } = await database.executeSql(`select id from history where status = 'streaming'`);
      expect(streaming).toEqual([]);
      const { rows: held } = await database.executeSql(`select (select coalesce(sum(credits_held), 0) from users)::float8 + (select coalesce(sum(credits_held), 0) from institutions)::float8 as held`);
      expect(Number(held[0].held)).toBe(0);
    });
  }, 420_000);
});

async function fileReady(url: string, token: string, fileId: string, timeoutMs: number) {
  return waitForValue('the file ready', async () => {
    const current = (await api(url, `/api/user/files/${fileId}`, token)).body.data;
    return current.status === 'ready' ? current : undefined;
  }, timeoutMs);
}

/** Once every process has stopped: one generation of the file with the chunks of a clean ingestion, no job left running or held. */
async function expectCleanIngestion(fileId: string): Promise<void> {
  await deployment.stopAll();
  await deployment.inspect(async (database) => {
    expect(await chunkGenerations(database, fileId)).toEqual([{ generation: expect.any(Number), chunks: EXPECTED_CHUNKS }]);
    expect(await unfinishedJobs(database)).toEqual([]);
    expect(await heldAttempts(database)).toEqual([]);
  });
}

async function chunkGenerations(database: DatabaseHandle, fileId: string) {
  const { rows } = await database.executeSql(`select generation, count(*)::int as chunks from file_chunks where file_id = $1 group by generation`, [fileId]);
  return rows;
}

/** Jobs left to do, but for the runs of the scheduled ones (whose next run may be queued at any time). */
async function unfinishedJobs(database: DatabaseHandle) {
  const { rows } = await database.executeSql(`select name, state::text as state from pgboss.job where state in ('created', 'retry', 'active') and name not like '\\_\\_pgboss%' and name not in (select name from pgboss.schedule)`);
  return rows;
}

async function heldAttempts(database: DatabaseHandle) {
  const { rows } = await database.executeSql(`select job_name from job_attempts where process_id is not null`);
  return rows;
}
