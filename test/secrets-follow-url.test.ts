// A stored secret belongs to the endpoint it was entered for. For every admin record holding a secret
// beside a URL (connectors, custom models, twins' sign-in providers; found in the OpenAPI document, so
// a new one must join the table), moving the URL to another origin without a new secret removes the
// stored one, and the new server never receives it; the same origin keeps it; a new secret with the
// move is the one kept. Every answer of these journeys is searched for the secrets: never there.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customModels } from '../src/modules/custom-models/custom-models.tables.js';
import { mcpServers } from '../src/modules/connectors/connectors.tables.js';
import { ssoProviders } from '../src/modules/oauth/oauth.tables.js';
import type { TwinRow } from '../src/modules/twins/twins.tables.js';
import { sameOrigin, secretAfterMove } from '../src/platform/net/secret-after-move.js';
import { loadConfig } from '../src/config.js';
import { startTestApp, type TestApp } from './support/app.js';
import { buildAssistant } from './support/assistants.js';
import { buildTwin, buildUser, signIn } from './support/factories.js';
import type { JsonSchema } from './support/fuzz-inputs.js';
import { askQanda } from './support/http.js';

const DEPLOYMENT_KEY = 'sk-deployment-never-elsewhere';

/** A loopback server that records everything it is sent (and answers 500). */
interface Recorder {
  url: string;
  port: number;
  heard: string[];
  close(): Promise<void>;
}

async function startRecorder(): Promise<Recorder> {
  const heard: string[] = [];
  const server: Server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      heard.push(`${request.method} ${request.url} ${JSON.stringify(request.headers)} ${body}`);
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"recorder"}}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    heard,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

interface SecretRecord {
  name: string;
  create: string;
  item: string;
  urlField: string;
  secretField: string;
  /** The record's flag saying a secret is stored. */
  flag: string;
  body(url: string, secret: string): Record<string, unknown>;
  /** A URL of the record at a recorder's base. */
  at(base: string): string;
  /** Makes the service use the record's URL (as it would with the stored secret). */
  use(id: string): Promise<unknown>;
  sealed(id: string): Promise<string | null>;
}

let t: TestApp;
let twin: TwinRow;
let adminToken = '';
let memberToken = '';
let base = '';
let recorders: Recorder[] = [];
/** Every answer body of the journeys below. */
const answers: string[] = [];
const secrets: string[] = [DEPLOYMENT_KEY];
let counter = 0;

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const response = await t.app.inject({ method, url, headers: { 'x-access-token': adminToken }, ...(payload ? { payload } : {}) });
  answers.push(response.body);
  return { status: response.statusCode, body: response.json() as { data: Record<string, unknown> & { _id: string } } };
}

const secret = (label: string) => {
  const value = `secret-${label}-${++counter}-${Math.random().toString(36).slice(2)}`;
  secrets.push(value);
  return value;
};

const RECORDS: SecretRecord[] = [
  {
    name: 'connector',
    create: '/api/admin/mcp-server',
    item: '/api/admin/mcp-server/',
    urlField: 'url',
    secretField: 'credential',
    flag: 'hasCredential',
    body: (url, value) => ({ name: `Server ${++counter}`, url, status: 'active', credential: value }),
    at: (origin) => `${origin}/mcp`,
    // Each save lists the server's tools; a refresh does it again.
    use: (id) => call('POST', `/api/admin/mcp-server/${id}/refresh`),
    sealed: async (id) => (await t.platform.database.db.select().from(mcpServers).where(eq(mcpServers.id, id)))[0].credentialSealed,
  },
  {
    name: 'custom model',
    create: '/api/admin/ai-model',
    item: '/api/admin/ai-model/',
    urlField: 'baseUrl',
    secretField: 'apiKey',
    flag: 'apiKeySet',
    body: (url, value) => ({ name: `Model ${++counter}`, model: 'm', baseUrl: url, apiKey: value }),
    at: (origin) => `${origin}/v1`,
    use: async (id) => {
      const [row] = await t.platform.database.db.select().from(customModels).where(eq(customModels.id, id));
      const assistant = await buildAssistant(t.platform.database.db, { twinId: twin.id, twinShared: true, conversationModel: row.name });
      const answer = await askQanda(base, memberToken, { inputs: ['Hello'], requestArgs: { assistantId: assistant.id } });
      answers.push(JSON.stringify(answer.body));
    },
    sealed: async (id) => (await t.platform.database.db.select().from(customModels).where(eq(customModels.id, id)))[0].apiKeySealed,
  },
  {
    name: 'sign-in provider',
    create: '/api/admin/sso-provider',
    item: '/api/admin/sso-provider/',
    urlField: 'issuer',
    secretField: 'clientSecret',
    flag: 'hasClientSecret',
    body: (url, value) => ({ name: `IdP ${++counter}`, issuer: url, clientId: 'client', clientSecret: value }),
    at: (origin) => `${origin}/realm`,
    use: async (id) => answers.push((await t.app.inject({ method: 'GET', url: `/api/auth/oauth/${id}` })).body),
    sealed: async (id) => (await t.platform.database.db.select().from(ssoProviders).where(eq(ssoProviders.id, id)))[0].clientSecretSealed,
  },
];

beforeAll(async () => {
  recorders = await Promise.all([startRecorder(), startRecorder(), startRecorder()]);
  // The loopback recorders are the operator's allowed hosts; the deployment's own endpoint (and key) is configuration.
  t = await startTestApp({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', OPENAI_BASE_URL: `${recorders[2].url}/v1`, OPENAI_API_KEY: DEPLOYMENT_KEY, DEFAULT_MODEL: 'm' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const db = t.platform.database.db;
  twin = await buildTwin(db);
  adminToken = await signIn(t.app, (await buildUser(db, { twin, role: 'admin' })).user.email);
  memberToken = await signIn(t.app, (await buildUser(db, { twin })).user.email);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await Promise.all(recorders.map((recorder) => recorder.close()));
});

const [first, second] = [() => recorders[0], () => recorders[1]];
const heardBy = (recorder: Recorder, value: string) => recorder.heard.filter((line) => line.includes(value));

describe('the rule', () => {
  it('compares origins: scheme, host and port', () => {
    expect(sameOrigin('https://a.example/v1', 'https://A.example:443/other')).toBe(true);
    expect(sameOrigin('https://a.example', 'http://a.example')).toBe(false);
    expect(sameOrigin('https://a.example', 'https://a.example:8443')).toBe(false);
    expect(sameOrigin('https://a.example', 'https://b.example')).toBe(false);
    expect(sameOrigin('', '')).toBe(true);
    expect(sameOrigin('', 'https://a.example')).toBe(false);
    expect(secretAfterMove('https://a.example', 'https://b.example', 'keep')).toBe('remove');
    expect(secretAfterMove('https://a.example', undefined, 'keep')).toBe('keep');
    expect(secretAfterMove('https://a.example', 'https://b.example', { set: 'new' })).toEqual({ set: 'new' });
  });

  it('OUTBOUND_ALLOWED_HOSTS lists the exempt hosts, CONNECTOR_ALLOWED_HOSTS read when it is unset', () => {
    const base = { DATA_DIR: t.dataDir, JWT_SECRET: 'x'.repeat(32), ENCRYPTION_KEY: 'a'.repeat(64) };
    expect(loadConfig({ ...base, OUTBOUND_ALLOWED_HOSTS: 'a.internal, 10.0.0.5' }).outbound.allowedHosts).toEqual(['a.internal', '10.0.0.5']);
    expect(loadConfig({ ...base, CONNECTOR_ALLOWED_HOSTS: 'old.internal' }).outbound.allowedHosts).toEqual(['old.internal']);
    expect(loadConfig({ ...base, OUTBOUND_ALLOWED_HOSTS: 'new.internal', CONNECTOR_ALLOWED_HOSTS: 'old.internal' }).outbound.allowedHosts).toEqual(['new.internal']);
    expect(loadConfig(base).outbound.allowedHosts).toEqual([]);
  });

  it('covers every admin record that holds a secret beside a URL (from the OpenAPI document)', async () => {
    const doc = (await t.app.inject({ url: '/api/docs/json' })).json() as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
    };
    const found: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      const fields = Object.keys(methods.post?.requestBody?.content['application/json']?.schema.properties ?? {});
      const secretField = fields.some((field) => /credential|apikey|secret|password|token/i.test(field));
      const urlField = fields.some((field) => /(url|uri|issuer|endpoint)$/i.test(field));
      if (path.startsWith('/api/admin/') && secretField && urlField) found.push(path);
    }
    expect(found.sort()).toEqual(RECORDS.map((record) => record.create).sort());
  });
});

describe.each(RECORDS)('$name', (record) => {
  async function created(value: string) {
    const response = await call('POST', record.create, record.body(record.at(first().url), value));
    expect(response.status).toBe(201);
    expect(response.body.data[record.flag]).toBe(true);
    return response.body.data._id;
  }

  it('moved to another port without a new secret: the stored one is removed, and the new server never receives it', async () => {
    const value = secret(record.name);
    const id = await created(value);
    const moved = await call('PUT', `${record.item}${id}`, { [record.urlField]: record.at(second().url) });
    expect(moved.status).toBe(200);
    expect(moved.body.data[record.flag]).toBe(false);
    expect(await record.sealed(id)).toBeNull();
    const before = second().heard.length;
    await record.use(id);
    // The new server was asked (the check below is not vacuous), without the secret.
    expect(second().heard.length).toBeGreaterThan(before);
    expect(heardBy(second(), value)).toEqual([]);
    expect(heardBy(second(), DEPLOYMENT_KEY)).toEqual([]);
  });

  it('moved to another scheme or host: removed too', async () => {
    const onScheme = await created(secret(record.name));
    const scheme = await call('PUT', `${record.item}${onScheme}`, { [record.urlField]: record.at(first().url.replace('http:', 'https:')) });
    expect(scheme.body.data[record.flag]).toBe(false);
    const onHost = await created(secret(record.name));
    const host = await call('PUT', `${record.item}${onHost}`, { [record.urlField]: record.at('https://elsewhere.nowhere.example') });
    expect(host.status).toBe(200);
    expect(host.body.data[record.flag]).toBe(false);
  });

  it('another path on the same origin keeps it', async () => {
    const value = secret(record.name);
    const id = await created(value);
    const stored = await record.sealed(id);
    const moved = await call('PUT', `${record.item}${id}`, { [record.urlField]: `${record.at(first().url)}/other` });
    expect(moved.body.data[record.flag]).toBe(true);
    expect(t.platform.secrets.decrypt((await record.sealed(id))!)).toBe(value);
    expect(await record.sealed(id)).toBe(stored);
  });

  it('a new secret given with the move is the one kept; the old one never reaches the new server', async () => {
    const old = secret(record.name);
    const id = await created(old);
    const fresh = secret(record.name);
    const moved = await call('PUT', `${record.item}${id}`, { [record.urlField]: record.at(second().url), [record.secretField]: fresh });
    expect(moved.body.data[record.flag]).toBe(true);
    expect(t.platform.secrets.decrypt((await record.sealed(id))!)).toBe(fresh);
    await record.use(id);
    expect(heardBy(second(), old)).toEqual([]);
  });

  it('the journey of an administrator: create, read, list, edit, delete; no answer carries a secret', async () => {
    const id = await created(secret(record.name));
    await call('GET', `${record.item}${id}`);
    await call('GET', record.create.replace(/\/([a-z-]+)$/, '/$1s'));
    await call('PUT', `${record.item}${id}`, { name: `Renamed ${++counter}` });
    await call('PUT', `${record.item}${id}`, { [record.secretField]: secret(record.name) });
    await call('GET', `${record.item}${id}`);
    await call('DELETE', `${record.item}${id}`);
  });
});

it('no answer of the journeys above carried a secret', async () => {
  answers.push((await t.app.inject({ url: '/api/user/customModels', headers: { 'x-access-token': memberToken } })).body);
  expect(answers.length).toBeGreaterThan(30);
  for (const value of secrets) {
    const leaks = answers.filter((body) => body.includes(value));
    expect(leaks, `${value} in ${leaks[0]?.slice(0, 300)}`).toEqual([]);
  }
});
