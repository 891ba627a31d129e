// The README's examples, run as a newcomer runs them: every fenced `sh` block in order, in one bash
// session, with the real curl and jq, against a fresh service started as the README starts it (its own
// process from dist/main.js, a new data folder as ./data of the session's directory, ADMIN_EMAIL and
// ADMIN_PASSWORD, no model endpoint: the built-in local model). Every curl goes through a shell
// function that records its status and body; a status other than the one the README shows (2xx when
// it shows none) stops the session at once. Then each `# →` answer is checked (keys and literal values)
// and each `# data:` frame list (types in order). Blocks marked `<!-- readme-test: skip <reason> -->`
// and the section "The scaled shape" (its own processes; written by the scaled-shape work) are not
// run, each with its reason. Also: every operation of the OpenAPI document is named in the README,
// and the launch allow-list names only operations that exist. On PGlite, or on a new PostgreSQL
// database with Redis when TEST_DATABASE_URL is set.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_SCOPE_ALLOW_LIST } from '../src/modules/auth/launch-scope.js';
import { openTestDatabase, type TestDatabase } from './support/database.js';
import { startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from './support/processes.js';
import { curlExamples, isNamed, literalMatches, namedRoutes, readmeBlocks, shownPromises, valuesOf, type CurlExample, type ReadmeBlock } from './support/readme.js';

const README_PATH = path.join(import.meta.dirname, '..', 'README.md');
const README = readFileSync(README_PATH, 'utf8');
/** The section another part of the work owns; it starts processes of its own. */
const SCALED_SECTION = 'The scaled shape';
/** What the README's first start names (checked below to be in the README). */
const ADMIN = { email: 'admin@example.org', password: 'a long password' };
const SESSION_TIMEOUT_MS = 90_000;

interface PlannedBlock {
  block: ReadmeBlock;
  /** Null: the block runs. */
  skipped: string | null;
}

function plan(): PlannedBlock[] {
  return readmeBlocks(README)
    .filter((block) => block.lang === 'sh')
    .map((block) => ({
      block,
      skipped: block.section === SCALED_SECTION ? `in "${SCALED_SECTION}": it starts processes of its own (its commands are checked by the scaled-shape tests)` : block.skip,
    }));
}

/** The block's code with each curl example sent through `rcurl <README line> <expected status>`, and the service's address. */
function runnableCode(block: ReadmeBlock, examples: CurlExample[], address: string): string {
  const lines = block.code.split('\n');
  for (const example of examples) {
    const index = example.line - block.line - 1;
    const replaced = lines[index].replace(/(^|[\s$(|;&])curl(\s)/, `$1rcurl ${example.line} ${example.status ?? '2xx'}$2`);
    if (replaced === lines[index]) throw new Error(`README line ${example.line}: no curl to run`);
    lines[index] = replaced;
  }
  return lines.join('\n').replaceAll('http://localhost:3000', `http://${address}`).replaceAll('localhost:3000', address);
}

// rcurl records every call (README line, status, body file) in calls.tsv, even inside $(…) and pipes,
// prints the body as curl would, and ends the whole session (kill $$) on a status the README does not show.
const PRELUDE = String.raw`
set -euo pipefail
rcurl() {
  local line=$1 expect=$2; shift 2
  local body status
  body=$(mktemp "$README_LOG/body.XXXXXX")
  if printf '%s\n' "$@" | grep -qx -- '-o'; then
    status=$(command curl -w '%{http_code}' "$@") || true
  else
    status=$(command curl -o "$body" -w '%{http_code}' "$@") || true
    cat "$body"
  fi
  printf '%s\t%s\t%s\n' "$line" "$status" "$body" >> "$README_LOG/calls.tsv"
  local ok=0
  if [[ $expect == 2xx ]]; then [[ $status == 2?? ]] && ok=1; else [[ $status == "$expect" ]] && ok=1; fi
  if [[ $ok == 0 ]]; then
    echo "README line $line: expected $expect, got $status: $(head -c 600 "$body")" >&2
    kill -TERM $$
    return 1
  fi
}
`;

function frameTypes(body: string): string[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => (JSON.parse(line.slice(6)) as { type: string }).type);
}

function checkShape(example: CurlExample, body: string): string[] {
  const problems: string[] = [];
  const where = `README line ${example.line}`;
  if (example.frames.length > 0) {
    const types = frameTypes(body);
    let at = 0;
    for (const frame of example.frames) {
      const type = /"type"\s*:\s*"(\w+)"/.exec(frame)?.[1] ?? '(no type)';
      const found = types.indexOf(type, at);
      if (found < 0) problems.push(`${where}: no "${type}" frame after position ${at} in ${JSON.stringify(types)}`);
      else at = found + 1;
    }
  }
  if (example.shape) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [...problems, `${where}: the answer is not JSON: ${body.slice(0, 300)}`];
    }
    const { keys, literals } = shownPromises(example.shape);
    for (const key of keys) if (valuesOf(parsed, key).length === 0) problems.push(`${where}: no "${key}" in ${body.slice(0, 600)}`);
    for (const { key, value } of literals) {
      const values = valuesOf(parsed, key);
      if (values.length > 0 && !values.some((actual) => literalMatches(value, actual))) {
        problems.push(`${where}: "${key}" shown as ${JSON.stringify(value)}, answered ${JSON.stringify(values)}`);
      }
    }
  }
  return problems;
}

let service: ServiceProcess | undefined;
let database: TestDatabase | undefined;
let workDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'dt-readme-'));
  const env: Record<string, string> = {
    DATA_DIR: path.join(workDir, 'data'),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    // The README's first start has no model endpoint: the built-in local model answers.
    OPENAI_BASE_URL: '',
    OPENAI_API_KEY: '',
    DEFAULT_MODEL: '',
    EMBEDDING_MODEL: '',
    SMTP_URL: '',
  };
  if (process.env.TEST_DATABASE_URL) {
    database = await openTestDatabase(); // migrated, no account yet
    Object.assign(env, {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL ?? '',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
  } else {
    Object.assign(env, { DATABASE_URL: '', REDIS_URL: '' });
  }
  service = await startProcess(SERVICE_MAIN, [], env);
}, 120_000);

afterAll(async () => {
  await stopProcess(service);
  await database?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe("the README's examples", () => {
  it('start the service the way the test does, and every block not run says why', () => {
    expect(README).toContain(`ADMIN_EMAIL=${ADMIN.email} ADMIN_PASSWORD='${ADMIN.password}' npm start`);
    const blocks = plan();
    expect(blocks.filter((entry) => entry.skipped === null).length).toBeGreaterThan(10);
    for (const entry of blocks) if (entry.skipped !== null) expect(entry.skipped.length, `README line ${entry.block.line}`).toBeGreaterThan(15);
  });

  it('run in order against a fresh service, each answer as the README shows it', async () => {
    for (const tool of ['bash', 'curl', 'jq']) {
      expect(spawnSync('sh', ['-c', `command -v ${tool}`]).status, `${tool} is needed to run the README's examples`).toBe(0);
    }
    const address = new URL(service!.url).host;
    const logDir = path.join(workDir, 'log');
    rmSync(logDir, { recursive: true, force: true });
    const runnable = plan().filter((entry) => entry.skipped === null);
    const examples = new Map<number, CurlExample>();
    const parts = [PRELUDE];
    for (const { block } of runnable) {
      const found = curlExamples(block);
      for (const example of found) examples.set(example.line, example);
      parts.push(`echo "::README block at line ${block.line}" >&2`, runnableCode(block, found, address));
    }
    const script = parts.join('\n');
    writeFileSync(path.join(workDir, 'readme.sh'), script);

    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('bash', ['-c', `mkdir -p "$README_LOG" && touch "$README_LOG/calls.tsv" && exec bash "${path.join(workDir, 'readme.sh')}"`], {
        cwd: workDir,
        env: { ...process.env, README_LOG: logDir },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let errors = '';
      child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), SESSION_TIMEOUT_MS);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolve({ code: exitCode, stderr: errors });
      });
    });
    const failure = stderr.split('\n').filter((line) => !line.startsWith('::README block')).join('\n').trim();
    expect(code, `the README session stopped (last block: ${stderr.match(/::README block at line \d+/g)?.at(-1)}):\n${failure}`).toBe(0);

    // The last call of each example line is the answer the README shows (a waiting loop calls more than once).
    const calls = new Map<number, { status: string; body: string }>();
    for (const row of readFileSync(path.join(logDir, 'calls.tsv'), 'utf8').split('\n').filter(Boolean)) {
      const [line, status, bodyFile] = row.split('\t');
      calls.set(Number(line), { status, body: readFileSync(bodyFile, 'utf8') });
    }
    const problems: string[] = [];
    for (const example of examples.values()) {
      const call = calls.get(example.line);
      if (!call) {
        problems.push(`README line ${example.line}: never called`);
        continue;
      }
      problems.push(...checkShape(example, call.body));
    }
    expect(problems).toEqual([]);
  }, SESSION_TIMEOUT_MS + 30_000);

  it('names every operation of the OpenAPI document', async () => {
    const doc = (await (await fetch(`${service!.url}/api/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const named = namedRoutes(README);
    const missing = Object.entries(doc.paths).flatMap(([route, operations]) =>
      Object.keys(operations)
        .filter((method) => !isNamed(named, method, route))
        .map((method) => `${method.toUpperCase()} ${route}`),
    );
    expect(missing).toEqual([]);
  });

  it('lets launch sessions use only routes that exist', async () => {
    const doc = (await (await fetch(`${service!.url}/api/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = new Set(
      Object.entries(doc.paths).flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route.replace(/\{(\w+)\}/g, ':$1')}`)),
    );
    expect(LAUNCH_SCOPE_ALLOW_LIST.filter((entry) => !operations.has(entry))).toEqual([]);
  });
});
