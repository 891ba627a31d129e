// The outbound guard as an attacker who administers one twin meets it: every admin route whose body
// takes a URL (found in the OpenAPI document, so that a new route is covered the day it is added) is
// sent the guard's hostile URL table and refuses each with 400; and a listener on a loopback port outside
// OUTBOUND_ALLOWED_HOSTS hears nothing, neither from those saves nor from an unauthenticated sign-in
// start through a provider, nor from a turn on a custom model, whose rows point at it directly.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelRegistry } from '../src/ai/registry.js';
import { customModels } from '../src/modules/custom-models/custom-models.tables.js';
import { mcpServers } from '../src/modules/connectors/connectors.tables.js';
import { ssoProviders } from '../src/modules/oauth/oauth.tables.js';
import type { TwinRow } from '../src/modules/twins/twins.tables.js';
import { newId } from '../src/platform/ids/ids.js';
import { startTestApp, type TestApp } from './support/app.js';
import { buildAssistant } from './support/assistants.js';
import { buildTwin, buildUser, signIn } from './support/factories.js';
import type { JsonSchema } from './support/fuzz-inputs.js';
import { HOSTILE_LITERAL_URLS } from './support/hostile-urls.js';
import { askQanda } from './support/http.js';

/** Field names that hold a URL. */
const URL_LIKE = /(url|uri|issuer|endpoint|webhook|callback|redirect)$/i;

/**
 * URL fields the service never requests itself, and why: a browser shows or checks them. A new URL field
 * that the service fetches must go through the outbound guard instead of joining this list.
 */
const NEVER_FETCHED: Record<string, string> = {
  picture_url: "an assistant's picture, loaded by the browser",
  publicAuthorizedUrls: 'origins allowed to embed the twin, compared with a browser\'s Origin header',
};

interface OpenApiOperation {
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface UrlRoute {
  method: string;
  path: string;
  field: string;
  body: JsonSchema;
}

let t: TestApp;
let twin: TwinRow;
let adminToken = '';
let memberToken = '';
let base = '';
let listener: Server;
let listenerPort = 0;
const heard: string[] = [];
const seeded: Record<string, string> = {};

beforeAll(async () => {
  listener = createServer((request, response) => {
    heard.push(`${request.method} ${request.url} ${request.headers.authorization ?? ''}`);
    response.writeHead(500).end();
  });
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
  listenerPort = (listener.address() as AddressInfo).port;
  // An allow list that names some other host: the listener's is outside it.
  t = await startTestApp({ env: { OUTBOUND_ALLOWED_HOSTS: 'models.allowed.example' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const db = t.platform.database.db;
  twin = await buildTwin(db);
  adminToken = await signIn(t.app, (await buildUser(db, { twin, role: 'admin' })).user.email);
  memberToken = await signIn(t.app, (await buildUser(db, { twin })).user.email);
  // One record of each family a route with an id may change (public URLs that do not resolve: nothing is fetched).
  const as = async (url: string, payload: object) => {
    const response = await t.app.inject({ method: 'POST', url, headers: { 'x-access-token': adminToken }, payload });
    if (response.statusCode !== 201 && response.statusCode !== 200) throw new Error(`seeding ${url}: ${response.statusCode} ${response.body}`);
    return (response.json() as { data: { _id: string } }).data._id;
  };
  seeded.connector = await as('/api/admin/mcp-server', { name: 'Seeded', url: 'https://mcp.nowhere.example/mcp', status: 'active' });
  seeded.model = await as('/api/admin/ai-model', { name: 'Seeded model', model: 'm', baseUrl: 'https://models.nowhere.example/v1' });
  seeded.provider = await as('/api/admin/sso-provider', { name: 'Seeded IdP', issuer: 'https://idp.nowhere.example', clientId: 'c' });
  seeded.ltiPlatform = await as('/api/admin/lti-platform', {
    issuer: 'https://lms.nowhere.example',
    clientId: 'c',
    authLoginUrl: 'https://lms.nowhere.example/auth',
    jwksUrl: 'https://lms.nowhere.example/certs',
    deploymentIds: ['1'],
  });
  seeded.assistant = (await buildAssistant(db, { twinId: twin.id })).id;
}, 60_000);

afterAll(async () => {
  await t?.close();
  await new Promise<void>((done) => listener.close(() => done()));
});

function resolveRef(schema: JsonSchema | undefined, refs: Record<string, JsonSchema>): JsonSchema | undefined {
  if (schema?.$ref) return refs[schema.$ref.replace('#/components/schemas/', '')];
  return schema;
}

/** Every admin route whose JSON body has a URL-like string field, with that field. */
function urlRoutes(doc: OpenApiDocument): UrlRoute[] {
  const refs = doc.components?.schemas ?? {};
  const routes: UrlRoute[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/admin/')) continue;
    for (const [method, operation] of Object.entries(methods)) {
      const body = resolveRef(operation.requestBody?.content['application/json']?.schema, refs);
      for (const [field, property] of Object.entries(body?.properties ?? {})) {
        const looksLikeUrl = URL_LIKE.test(field) || JSON.stringify(property).includes('"format":"uri"');
        if (looksLikeUrl && !(field in NEVER_FETCHED)) routes.push({ method: method.toUpperCase(), path, field, body: body! });
      }
    }
  }
  return routes;
}

/** The smallest body the schema takes, besides the field under test. */
function minimalBody(schema: JsonSchema, refs: Record<string, JsonSchema>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const property = resolveRef(schema.properties?.[name], refs) ?? {};
    body[name] = sample(property, name);
  }
  return body;
}

let unique = 0;
function sample(schema: JsonSchema, name: string): unknown {
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (variant) return sample(variant, name);
  if (schema.enum) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'boolean') return true;
  if (type === 'number' || type === 'integer') return schema.minimum ?? 1;
  if (type === 'array') return [];
  if (type === 'object') return {};
  return `${name}-${++unique}`;
}

/** A path's id: the seeded record whose GET on the same path answers 200. */
async function idFor(path: string): Promise<string | undefined> {
  const param = /\{(\w+)\}/.exec(path)?.[1];
  if (!param) return undefined;
  for (const id of Object.values(seeded)) {
    const response = await t.app.inject({ method: 'GET', url: path.replace(`{${param}}`, id), headers: { 'x-access-token': adminToken } });
    if (response.statusCode === 200) return id;
  }
  throw new Error(`no seeded record answers GET ${path}: seed one of its family`);
}

describe('every admin route taking a URL', () => {
  it('refuses each hostile URL with 400, as a twin admin, and nothing reaches a loopback listener', async () => {
    const doc = (await t.app.inject({ url: '/api/docs/json' })).json() as OpenApiDocument;
    const refs = doc.components?.schemas ?? {};
    const routes = urlRoutes(doc);
    const found = routes.map((route) => `${route.method} ${route.path} ${route.field}`);
    // The families known today; a new one is walked too, and listed here when it is reviewed.
    expect(found).toEqual(
      expect.arrayContaining([
        'POST /api/admin/mcp-server url',
        'PUT /api/admin/mcp-server/{id} url',
        'POST /api/admin/ai-model baseUrl',
        'PUT /api/admin/ai-model/{id} baseUrl',
        'POST /api/admin/sso-provider issuer',
        'PUT /api/admin/sso-provider/{id} issuer',
        'POST /api/admin/lti-platform issuer',
        'POST /api/admin/lti-platform authLoginUrl',
        'POST /api/admin/lti-platform jwksUrl',
        'PUT /api/admin/lti-platform/{id} jwksUrl',
      ]),
    );
    const atListener = [
      `http://127.0.0.1:${listenerPort}/`,
      `http://localhost:${listenerPort}/v1`,
      `http://2130706433:${listenerPort}/`,
      `http://[::ffff:127.0.0.1]:${listenerPort}/`,
      `http://0x7f.1:${listenerPort}/`,
    ];
    const failures: string[] = [];
    for (const route of routes) {
      const id = await idFor(route.path);
      const url = id ? route.path.replace(/\{\w+\}/, id) : route.path;
      for (const hostile of [...HOSTILE_LITERAL_URLS, ...atListener]) {
        const payload = { ...minimalBody(route.body, refs), [route.field]: hostile };
        const response = await t.app.inject({ method: route.method as 'POST', url, headers: { 'x-access-token': adminToken }, payload });
        const body = response.json() as { success?: boolean };
        if (response.statusCode !== 400 || body.success !== false) failures.push(`${route.method} ${route.path} ${route.field}=${hostile}: ${response.statusCode} ${response.body.slice(0, 200)}`);
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(heard).toEqual([]);
  }, 120_000);

  it('answers URL_NOT_ALLOWED for a custom model or sign-in provider (connectors keep CONNECTOR_URL_NOT_ALLOWED)', async () => {
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: { 'x-access-token': adminToken }, payload });
    const target = `http://127.0.0.1:${listenerPort}`;
    const model = await post('/api/admin/ai-model', { name: 'Probe', model: 'm', baseUrl: `${target}/v1` });
    expect(model.statusCode).toBe(400);
    expect(model.json()).toMatchObject({ success: false, code: 'URL_NOT_ALLOWED' });
    expect(model.json().message).toContain('loopback');
    const provider = await post('/api/admin/sso-provider', { name: 'Probe', issuer: target, clientId: 'c' });
    expect(provider.json()).toMatchObject({ success: false, code: 'URL_NOT_ALLOWED' });
    const metadata = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/ai-model/${seeded.model}`,
      headers: { 'x-access-token': adminToken },
      payload: { baseUrl: 'http://169.254.169.254/latest/' },
    });
    expect(metadata.json()).toMatchObject({ success: false, code: 'URL_NOT_ALLOWED' });
    const connector = await post('/api/admin/mcp-server', { name: 'Probe', url: `${target}/mcp`, status: 'active' });
    expect(connector.json()).toMatchObject({ success: false, code: 'CONNECTOR_URL_NOT_ALLOWED' });
    expect(heard).toEqual([]);
  });
});

describe('rows pointed at a loopback listener directly (past the checks of a save)', () => {
  it('an unauthenticated sign-in start through such a provider makes no request to it', async () => {
    const id = newId();
    await t.platform.database.db.insert(ssoProviders).values({ id, twinId: twin.id, name: 'Scanner', issuer: `http://127.0.0.1:${listenerPort}`, clientId: 'c' });
    const start = await t.app.inject({ method: 'GET', url: `/api/auth/oauth/${id}` });
    expect(start.statusCode).toBe(502);
    expect(start.json()).toMatchObject({ success: false, code: 'OAUTH_PROVIDER_UNAVAILABLE' });
    expect(heard).toEqual([]);
  });

  it("a turn on such a custom model does not reach it", async () => {
    const db = t.platform.database.db;
    await db.insert(customModels).values({ twinId: twin.id, name: 'Scanner model', model: 'm', baseUrl: `http://127.0.0.1:${listenerPort}/v1` });
    const assistant = await buildAssistant(db, { twinId: twin.id, twinShared: true, conversationModel: 'Scanner model' });
    const answer = await askQanda(base, memberToken, { inputs: ['Hello'], requestArgs: { assistantId: assistant.id } });
    expect(JSON.stringify(answer.body)).not.toContain('Hello from');
    expect(heard).toEqual([]);
  });

  it("a turn with tools (the model provider's fetch) does not reach it either", async () => {
    const registry = createModelRegistry({});
    const resolved = registry.resolveModel({ kind: 'endpoint', baseUrl: `http://127.0.0.1:${listenerPort}/v1`, apiKey: 'k', model: 'm', outbound: t.platform.outbound });
    expect(resolved.chat?.guard).toBe(t.platform.outbound.policy);
    // Without the lean stream: the AI SDK's provider, as a turn with tools uses it.
    const refused = await generateText({ model: resolved.model, prompt: 'Hello', maxRetries: 0 }).catch((error: unknown) => error);
    expect(String(refused)).toContain('This URL is not allowed');
    expect(heard).toEqual([]);
  });

  it('a connector row at the listener is not reached when its tools are listed again', async () => {
    const db = t.platform.database.db;
    const [row] = await db.insert(mcpServers).values({ twinId: twin.id, name: 'Scanner server', url: `http://127.0.0.1:${listenerPort}/mcp` }).returning();
    const refresh = await t.app.inject({ method: 'POST', url: `/api/admin/mcp-server/${row.id}/refresh`, headers: { 'x-access-token': adminToken } });
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json()).toMatchObject({ code: 'CONNECTOR_URL_NOT_ALLOWED' });
    expect(heard).toEqual([]);
  });
});
