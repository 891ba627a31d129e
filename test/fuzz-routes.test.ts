// Every route of the OpenAPI document, sent generated bad input (test/support/fuzz-inputs.ts) by a super
// admin, a twin admin, a plain user and nobody: no answer may be a 5xx, every 4xx is JSON in the failure
// shape {success: false, message}, and only the routes that stream or serve files or pages may answer
// a 2xx that is not JSON. A fixed seed and a bounded number of runs per route keep it repeatable.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TwinRow } from '../src/modules/twins/twins.tables.js';
import { startTestApp, type TestApp } from './support/app.js';
import { buildTwin, buildUser, signIn } from './support/factories.js';
import { uploadFile } from './support/files.js';
import { requestsFor, type GeneratedRequest, type JsonSchema, type Operation, type Parameter } from './support/fuzz-inputs.js';

const SEED = Number(process.env.FUZZ_SEED ?? 19);
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 24);
const REQUEST_TIMEOUT_MS = 15_000;
const ROLES = ['super', 'twinAdmin', 'plain', 'nobody'] as const;
type Role = (typeof ROLES)[number];

/** Routes whose 2xx is legitimately not JSON: downloads, ZIPs, SSE, the reference page, metrics, redirects. */
const NON_JSON_SUCCESS = [
  /^GET \/api\/user\/files\/\{fileId\}\/download$/,
  /^GET \/api\/user\/files\/collections\/\{id\}\/zip$/,
  /^POST \/api\/ai\/personal-stream\/qanda-stream$/,
  /^GET \/api\/docs/,
  /^GET \/metrics$/,
  /^GET \/api\/auth\/oauth\/\{provider\}/,
];

/**
 * 5xx answers the contract itself gives a route, by status and code (not a bad input handled badly): a
 * deployment without a chat subscription answers its start 503 DEVICE_AUTH_DISABLED, whoever asks, and
 * one without a transcription provider answers speech-to-text 503 TRANSCRIBE_NOT_CONFIGURED, and one
 * without VOICE_AGENT_SECRET answers the voice agent's calls 503 VOICE_AGENT_NOT_CONFIGURED.
 */
const CONTRACT_5XX: Record<string, Array<[number, string]>> = {
  'POST /api/user/agents/connect/subscription/start': [[503, 'DEVICE_AUTH_DISABLED']],
  'POST /api/ai/transcribe': [[503, 'TRANSCRIBE_NOT_CONFIGURED']],
  'POST /api/ai/rt/voice-agent/tool': [[503, 'VOICE_AGENT_NOT_CONFIGURED']],
  'POST /api/ai/rt/voice-agent/ended': [[503, 'VOICE_AGENT_NOT_CONFIGURED']],
  'POST /api/ai/rt/session': [[503, 'RT_NOT_CONFIGURED']],
};

/**
 * Left out of the generated runs, and why: sign-out with a signed-in token would end the session every
 * later run of that role uses (it still gets the bad inputs as nobody, below).
 */
const SIGNED_IN_SKIP = new Set(['POST /api/auth/signout']);

let t: TestApp;
let twinA: TwinRow;
const tokens = {} as Record<Role, string | null>;
const ids: string[] = [];
/**
 * The seeded SSO provider's id is given to its own admin routes only: GET /api/auth/oauth/{provider}
 * with a real provider runs OpenID discovery against its issuer, real outbound network.
 */
let ssoProviderId = '';

beforeAll(async () => {
  t = await startTestApp();
  // Uploads queue their ingestion: the queue must run (no workers needed: nothing waits for the jobs).
  await t.platform.jobs.start({ work: false });
  const db = t.platform.database.db;
  twinA = await buildTwin(db);
  const twinB = await buildTwin(db);
  tokens.super = await signIn(t.app, (await buildUser(db, { twin: twinA, accountType: 'super' })).user.email);
  tokens.twinAdmin = await signIn(t.app, (await buildUser(db, { twin: twinA, role: 'admin' })).user.email);
  tokens.plain = await signIn(t.app, (await buildUser(db, { twin: twinA })).user.email);
  tokens.nobody = null;
  const seeded = await seedRows(twinB);
  ssoProviderId = seeded.provider;
  ids.push(...Object.values(seeded).filter((id) => id !== ssoProviderId), 'ffffffffffffffffffffffff');
}, 60_000);
afterAll(() => t?.close());

/**
 * Rows for the generated requests to reach past "not found": ids for path params and bodies. None of
 * them is a user, membership or twin A: deleting those would turn every later run of a role into a 401.
 */
async function seedRows(twinB: TwinRow): Promise<Record<string, string>> {
  const as = async (role: Role, url: string, payload: object) => {
    const response = await t.app.inject({ method: 'POST', url, headers: { 'x-access-token': tokens[role]! }, payload });
    if (response.statusCode >= 300) throw new Error(`seeding ${url}: ${response.statusCode} ${response.body}`);
    return response.json() as { data?: { _id: string }; historyId?: string; uploadId?: string };
  };
  const memory = await as('plain', '/api/user/memory', { key_name: 'k', key_value: 'v' });
  const assistant = await as('plain', '/api/user/assistant', { name: 'Fuzz helper' });
  const collection = await as('plain', '/api/user/files/collections', { name: 'Fuzz' });
  const turn = await as('plain', '/api/ai/personal/qanda', { inputs: ['Hello'], requestArgs: {} });
  await as('plain', `/api/user/history/${turn.historyId}/feedback`, { rating: 'down', comment: 'seed' });
  const feedbackList = await t.app.inject({ url: '/api/admin/feedback', headers: { 'x-access-token': tokens.super! } });
  const feedback = { data: (feedbackList.json() as { data: Array<{ _id: string }> }).data[0] };
  const model = await as('super', '/api/admin/ai-model', { name: 'Fuzz model', model: 'local', institution: twinA.id });
  const entitlement = await as('super', '/api/admin/entitlement', { name: 'Fuzz', institution: twinB.id });
  const provider = await as('twinAdmin', '/api/admin/sso-provider', { name: 'Fuzz IdP', issuer: 'https://idp.example.test', clientId: 'fuzz' });
  const upload = await uploadFile(t, tokens.plain!, { filename: 'seed.txt', content: 'seed text' });
  const seeded = {
    twin: twinB.id, memory: memory.data?._id, assistant: assistant.data?._id, collection: collection.data?._id, history: turn.historyId,
    feedback: feedback.data?._id, model: model.data?._id, entitlement: entitlement.data?._id, provider: provider.data?._id,
    upload: (upload.json() as { uploadId?: string }).uploadId,
  };
  const missing = Object.entries(seeded).filter(([, id]) => typeof id !== 'string');
  if (missing.length > 0) throw new Error(`seeding gave no id for ${missing.map(([name]) => name).join(', ')}`);
  return seeded as Record<string, string>;
}

/** A PUT or PATCH naming no known field, on each seeded row, as a super admin: always sent first. */
function emptyChanges(operation: Operation, pool: string[]): Array<[Role, GeneratedRequest]> {
  const param = operation.parameters.find((p) => p.in === 'path');
  if (!['PUT', 'PATCH'].includes(operation.method) || !param) return [];
  return pool.flatMap((id) =>
    ['{}', '{"unknownOnly":true}'].map((payload): [Role, GeneratedRequest] => [
      'super',
      { url: operation.path.replace(`{${param.name}}`, id), headers: { 'content-type': 'application/json' }, payload },
    ]),
  );
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: JsonSchema }> }; consumes?: string[] }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content ?? {};
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: content['application/json']?.schema,
        multipart: 'multipart/form-data' in content || path === '/api/user/files' && method === 'post',
      });
    }
  }
  // Not in the document (hidden), yet reachable: the reference page and the metrics.
  for (const path of ['/api/docs', '/api/docs/json', '/metrics']) operations.push({ method: 'GET', path, parameters: [], multipart: false });
  return operations;
}

/** Why a response breaks the rule, or null. */
function problemWith(key: string, status: number, contentType: string, body: string): string | null {
  if (status >= 500 && !CONTRACT_5XX[key]?.some(([allowed, code]) => status === allowed && body.includes(`"code":"${code}"`))) return `answered ${status}`;
  const isJson = /^application\/json/.test(contentType);
  if (status >= 400) {
    if (!isJson) return `answered ${status} with ${contentType || 'no content type'}`;
    const parsed = JSON.parse(body) as { success?: unknown; message?: unknown };
    if (parsed.success !== false || typeof parsed.message !== 'string') return `answered ${status} outside the failure shape`;
    return null;
  }
  if (status === 204 || (status >= 300 && status < 400)) return null;
  if (isJson) {
    JSON.parse(body);
    return null;
  }
  return NON_JSON_SUCCESS.some((allowed) => allowed.test(key)) ? null : `answered ${status} with ${contentType || 'no content type'}`;
}

const short = (value: unknown) => {
  const text = typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value);
  return text && text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
};

it('answers every route\'s bad input with a 4xx in the failure shape, never a 5xx', async () => {
  const doc = (await t.app.inject({ url: '/api/docs/json' })).json() as OpenApiDocument;
  const refs = doc.components?.schemas ?? {};
  const operations = operationsOf(doc);
  expect(operations.length).toBeGreaterThan(90);
  const failures: string[] = [];
  for (const [index, operation] of operations.entries()) {
    const key = `${operation.method} ${operation.path}`;
    const roles = SIGNED_IN_SKIP.has(key) ? (['nobody'] as const) : ROLES;
    const ctx = { ids: operation.path.includes('/sso-provider') ? [...ids, ssoProviderId] : ids, refs };
    const property = fc.asyncProperty(fc.constantFrom(...roles), requestsFor(operation, ctx), async (role, request) => {
      const token = tokens[role];
      const response = await Promise.race([
        t.app.inject({
          method: operation.method as 'GET',
          url: request.url,
          headers: { ...request.headers, ...(token ? { 'x-access-token': token } : {}) },
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS).unref()),
      ]);
      const contentType = String(response.headers['content-type'] ?? '');
      const problem = problemWith(key, response.statusCode, contentType, response.body);
      if (problem) throw new Error(`${problem}: ${short(response.body)}`);
    });
    const examples = SIGNED_IN_SKIP.has(key) ? [] : emptyChanges(operation, ctx.ids);
    const details = await fc.check(property, { seed: SEED + index, numRuns: RUNS_PER_ROUTE, endOnFailure: true, examples });
    if (details.failed) {
      const [role, request] = details.counterexample ?? [];
      failures.push(
        `${key} as ${role}: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n` +
          `  request: ${short(request?.url)} ${short(request?.headers)} ${short(request?.payload)}`,
      );
    }
  }
  expect(failures, failures.join('\n')).toEqual([]);
}, 180_000);
