// Connectors (MCP servers) as admin records, against real MCP servers on loopback: CRUD, bulk delete,
// refresh, the credential reaching the server and never any admin response (behaviour 9), a server that
// cannot be reached saved with its error, the outbound guard on every save, twins kept apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findMcpServerById } from './connectors.repo.js';

let t: TestApp;
let t1: TwinRow;
let t2: TwinRow;
let bearer: TestMcpServer;
let keyed: TestMcpServer;
let legacy: TestMcpServer;
const tok = {} as Record<'admin1' | 'admin2' | 'member' | 'granted' | 'super', string>;
/** Every admin response body of this file, searched for the credentials at the end. */
const bodies: string[] = [];
const CREDENTIALS = ['bearer-secret-1', 'header-secret-2', 'sse-secret-3', 'rotated-secret-4'];

const as = async (token: string | null, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => {
  const response = await t.app.inject({ method, url, headers: token ? { 'x-access-token': token } : {}, ...(payload === undefined ? {} : { payload: payload as object }) });
  bodies.push(response.body);
  return response;
};
const create = (token: string, payload: object) => as(token, 'POST', '/api/admin/mcp-server', payload);
let n = 0;
const named = (extra: object) => ({ name: `Server ${++n}`, ...extra });

beforeAll(async () => {
  [bearer, keyed, legacy] = await Promise.all([
    startMcpServer({ transport: 'streamable-http', credential: 'bearer-secret-1' }),
    startMcpServer({ transport: 'streamable-http', credential: 'header-secret-2', credentialHeader: 'X-Api-Key' }),
    startMcpServer({ transport: 'sse', credential: 'sse-secret-3' }),
  ]);
  t = await startTestApp({ env: { CONNECTOR_ALLOWED_HOSTS: '127.0.0.1', CONNECTOR_CALL_TIMEOUT_MS: '2000' } });
  const db = t.platform.database.db;
  t1 = await buildTwin(db);
  t2 = await buildTwin(db);
  const sign = async (options: Parameters<typeof buildUser>[1]) => signIn(t.app, (await buildUser(db, options)).user.email);
  tok.admin1 = await sign({ twin: t1, role: 'admin' });
  tok.admin2 = await sign({ twin: t2, role: 'admin' });
  tok.member = await sign({ twin: t1 });
  tok.granted = await sign({ twin: t1, grants: ['mcp.edit'] });
  tok.super = await sign({ twin: t2, accountType: 'super' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([bearer, keyed, legacy].map((server) => server?.close()));
});

describe('adding a connector', () => {
  it('lists the tools with the bearer credential, seals it, and shows only hasCredential', async () => {
    const response = await create(tok.admin1, named({ url: bearer.url, credential: 'bearer-secret-1' }));
    expect(response.statusCode).toBe(201);
    const { data } = response.json();
    expect(data).toMatchObject({ institution: t1.id, transport: 'streamable-http', hasCredential: true, credentialHeader: null, requireApproval: true, status: 'active', allowedTools: [], toolsError: null });
    expect(data.tools).toEqual(expect.arrayContaining([{ name: 'echo', description: 'Echoes the text back' }, { name: 'add', description: 'Adds two numbers' }]));
    expect(data.tools).toHaveLength(4);
    expect(data.toolsListedAt).toEqual(expect.any(String));
    expect(Object.keys(data)).not.toContain('credential');
    expect(bearer.refused()).toBe(0);
    const row = (await findMcpServerById(t.platform.database.db, data._id))!;
    expect(row.credentialSealed).toMatch(/^v1\./);
    expect(row.credentialSealed).not.toContain('bearer-secret-1');
    expect(row.tools.find((tool) => tool.name === 'add')!.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' } } });
  });

  it('sends the raw credential in credentialHeader when set', async () => {
    const { data } = (await create(tok.admin1, named({ url: keyed.url, credential: 'header-secret-2', credentialHeader: 'X-Api-Key' }))).json();
    expect(data).toMatchObject({ credentialHeader: 'X-Api-Key', hasCredential: true, toolsError: null });
    expect(data.tools).toHaveLength(4);
    // The same server with the credential as a bearer token refuses it: the error is on the record.
    const wrong = (await create(tok.admin1, named({ url: keyed.url, credential: 'header-secret-2' }))).json().data;
    expect(wrong.tools).toEqual([]);
    expect(wrong.toolsError).toMatch(/could not be reached/);
  });

  it('speaks SSE to an older server', async () => {
    const { data } = (await create(tok.admin1, named({ url: legacy.url, transport: 'sse', credential: 'sse-secret-3', requireApproval: false }))).json();
    expect(data).toMatchObject({ transport: 'sse', requireApproval: false, toolsError: null });
    expect(data.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['add', 'echo', 'fail', 'slow']);
  });

  it('saves a server that cannot be reached, with the reason on the record, and lists it on refresh once it is up', async () => {
    const probe = await startMcpServer({ transport: 'streamable-http' });
    const port = probe.port;
    await probe.close();
    const url = `http://127.0.0.1:${port}/mcp`;
    const response = await create(tok.admin1, named({ url }));
    expect(response.statusCode).toBe(201);
    const { data } = response.json();
    expect(data.tools).toEqual([]);
    expect(data.toolsError).toMatch(/^The server could not be reached: connect ECONNREFUSED 127.0.0.1:\d+$/);
    expect(data.toolsListedAt).toBeNull();

    const back = await startMcpServer({ transport: 'streamable-http', port });
    const refreshed = await as(tok.admin1, 'POST', `/api/admin/mcp-server/${data._id}/refresh`);
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().data).toMatchObject({ toolsError: null, hasCredential: false });
    expect(refreshed.json().data.tools).toHaveLength(4);
    await back.close();
    // Down again: the tools listed before stay, with the error beside them.
    const again = (await as(tok.admin1, 'POST', `/api/admin/mcp-server/${data._id}/refresh`)).json().data;
    expect(again.tools).toHaveLength(4);
    expect(again.toolsError).toMatch(/ECONNREFUSED/);
  });

  it('refuses a name already used in the twin (409), not across twins', async () => {
    expect((await create(tok.admin1, { name: 'Shared Name', url: bearer.url })).statusCode).toBe(201);
    const again = await create(tok.admin1, { name: 'shared name', url: bearer.url });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('MCP_SERVER_NAME_TAKEN');
    expect((await create(tok.admin2, { name: 'Shared Name', url: bearer.url })).statusCode).toBe(201);
  });

  it('refuses bad input with 400', async () => {
    const bad = [
      { url: bearer.url },
      { name: 'x' },
      { name: 'x', url: 'not a url' },
      { name: 'x', url: bearer.url, transport: 'websocket' },
      { name: 'x', url: bearer.url, credentialHeader: 'Bad Header' },
      { name: 'x', url: bearer.url, credentialHeader: 'Content-Type' },
      { name: 'x', url: bearer.url, credentialHeader: 'mcp-session-id' },
      { name: 'x', url: bearer.url, credential: 'line\r\nX-Injected: 1' },
      { name: 'x', url: bearer.url, allowedTools: 'echo' },
      { name: 'x', url: bearer.url, requireApproval: 'yes' },
      { name: 'x', url: bearer.url, status: 'paused' },
      { name: 'x', url: bearer.url, institution: 'nope' },
      { name: '', url: bearer.url },
    ];
    for (const payload of bad) {
      const response = await create(tok.admin1, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().success).toBe(false);
    }
    expect((await as(tok.admin1, 'GET', '/api/admin/mcp-server/123')).statusCode).toBe(400);
    expect((await as(tok.admin1, 'GET', '/api/admin/mcp-servers?limit=1000')).statusCode).toBe(400);
    expect((await as(tok.admin1, 'POST', '/api/admin/mcp-servers/bulk-delete', { ids: [] })).statusCode).toBe(400);
  });
});

describe('the outbound guard on save', () => {
  const hostile = [
    'http://2130706434/mcp',
    'http://0x7f.2/mcp',
    'http://0177.0.0.2/mcp',
    'http://[::1]/mcp',
    'http://[::ffff:127.0.0.1]/mcp',
    'http://127.0.0.2/mcp',
    'http://169.254.169.254/latest/meta-data/',
    'http://metadata.google.internal/',
    'http://10.0.0.7/mcp',
    'http://192.168.0.1/mcp',
    'http://172.20.1.1/mcp',
    'http://100.64.1.1/mcp',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'file:///etc/passwd',
    'ftp://ftp.example.com/mcp',
    'http://user:pass@127.0.0.1/mcp',
  ];

  // CONNECTOR_ALLOWED_HOSTS is 127.0.0.1 here: other loopback addresses (127.0.0.2 spelled in decimal, hex, octal) stay refused.
  it.each(hostile)('refuses %s with 400 CONNECTOR_URL_NOT_ALLOWED and saves nothing', async (url) => {
    const response = await create(tok.admin1, { name: `Hostile ${url}`, url });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, code: 'CONNECTOR_URL_NOT_ALLOWED' });
    const list = (await as(tok.admin1, 'GET', `/api/admin/mcp-servers?limit=100&search=${encodeURIComponent(url)}`)).json();
    expect(list.total).toBe(0);
  });

  it('refuses a loopback server that is really there when its host is not the one allowed (localhost is not 127.0.0.1 in CONNECTOR_ALLOWED_HOSTS)', async () => {
    const response = await create(tok.admin1, named({ url: bearer.url.replace('127.0.0.1', 'localhost'), credential: 'bearer-secret-1' }));
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('CONNECTOR_URL_NOT_ALLOWED');
  });

  it('refuses a PUT moving a server to a refused URL, and leaves it as it was', async () => {
    const { data } = (await create(tok.admin1, named({ url: bearer.url, credential: 'bearer-secret-1' }))).json();
    const moved = await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${data._id}`, { url: 'http://169.254.169.254/' });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().code).toBe('CONNECTOR_URL_NOT_ALLOWED');
    expect((await as(tok.admin1, 'GET', `/api/admin/mcp-server/${data._id}`)).json().data.url).toBe(bearer.url);
  });
});

describe('editing the credential (behaviour 9)', () => {
  it('keeps it when saved empty or missing, replaces it when given, removes it on null', async () => {
    const rotating = await startMcpServer({ transport: 'streamable-http', credential: 'rotated-secret-4' });
    const { data } = (await create(tok.admin1, named({ url: rotating.url, credential: 'bearer-secret-1' }))).json();
    expect(data.toolsError).toMatch(/could not be reached/);
    const put = async (body: object) => (await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${data._id}`, body)).json().data;

    const replaced = await put({ credential: 'rotated-secret-4' });
    expect(replaced).toMatchObject({ hasCredential: true, toolsError: null });
    expect(replaced.tools).toHaveLength(4);
    const sealed = (await findMcpServerById(t.platform.database.db, data._id))!.credentialSealed;

    const keptEmpty = await put({ credential: '', requireApproval: false });
    expect(keptEmpty).toMatchObject({ hasCredential: true, requireApproval: false, toolsError: null });
    const keptMissing = await put({ name: `${data.name} renamed` });
    expect(keptMissing).toMatchObject({ hasCredential: true, toolsError: null, name: `${data.name} renamed` });
    expect((await findMcpServerById(t.platform.database.db, data._id))!.credentialSealed).toBe(sealed);

    const removed = await put({ credential: null });
    expect(removed.hasCredential).toBe(false);
    expect(removed.toolsError).toMatch(/could not be reached/);
    expect((await findMcpServerById(t.platform.database.db, data._id))!.credentialSealed).toBeNull();
    await rotating.close();
  });
});

describe('who may do what', () => {
  it("answers 404 for another twin's server and leaves it alone", async () => {
    const { data } = (await create(tok.admin1, named({ url: bearer.url, credential: 'bearer-secret-1' }))).json();
    for (const [method, url, body] of [
      ['GET', `/api/admin/mcp-server/${data._id}`],
      ['PUT', `/api/admin/mcp-server/${data._id}`, { name: 'hijacked' }],
      ['DELETE', `/api/admin/mcp-server/${data._id}`],
      ['POST', `/api/admin/mcp-server/${data._id}/refresh`],
    ] as const) {
      const response = await as(tok.admin2, method, url, body);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json()).toMatchObject({ success: false, message: 'MCP server not found', code: 'MCP_SERVER_NOT_FOUND' });
    }
    expect((await create(tok.admin2, named({ url: bearer.url, institution: t1.id }))).statusCode).toBe(403);
    const list = (await as(tok.admin2, 'GET', '/api/admin/mcp-servers?limit=100')).json();
    expect(list.data.map((server: { _id: string }) => server._id)).not.toContain(data._id);
    expect((await findMcpServerById(t.platform.database.db, data._id))!.name).toBe(data.name);
  });

  it('needs mcp.edit: a plain member gets 403, a member with the grant may act, nobody signed in 401', async () => {
    expect((await create(tok.member, named({ url: bearer.url }))).statusCode).toBe(403);
    expect((await as(tok.member, 'GET', '/api/admin/mcp-servers')).statusCode).toBe(403);
    expect((await as(tok.member, 'POST', '/api/admin/mcp-servers/bulk-delete', { ids: ['aaaaaaaaaaaaaaaaaaaaaaaa'] })).statusCode).toBe(403);
    expect((await as(null, 'GET', '/api/admin/mcp-servers')).statusCode).toBe(401);
    expect((await create(tok.granted, named({ url: bearer.url }))).statusCode).toBe(201);
  });

  it('lets only super admins write servers of every twin; admins may read them', async () => {
    expect((await create(tok.admin1, named({ url: bearer.url, institution: null }))).statusCode).toBe(403);
    const created = await create(tok.super, named({ url: bearer.url, institution: null, credential: 'bearer-secret-1' }));
    expect(created.statusCode).toBe(201);
    const { data } = created.json();
    expect(data.institution).toBeNull();
    expect((await as(tok.admin1, 'GET', `/api/admin/mcp-server/${data._id}`)).statusCode).toBe(200);
    expect((await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${data._id}`, { status: 'inactive' })).statusCode).toBe(403);
    expect((await as(tok.admin1, 'POST', `/api/admin/mcp-server/${data._id}/refresh`)).statusCode).toBe(403);
    expect((await as(tok.admin1, 'POST', '/api/admin/mcp-servers/bulk-delete', { ids: [data._id] })).json()).toEqual({ success: true, changed: 0 });
    expect((await as(tok.super, 'PUT', `/api/admin/mcp-server/${data._id}`, { status: 'inactive' })).json().data.status).toBe('inactive');
    expect((await as(tok.super, 'DELETE', `/api/admin/mcp-server/${data._id}`)).statusCode).toBe(200);
  });
});

describe('listing and deleting', () => {
  it('lists paginated with a total and a search', async () => {
    const page = (await as(tok.admin1, 'GET', '/api/admin/mcp-servers?page=1&limit=2')).json();
    expect(page).toMatchObject({ success: true, page: 1, limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.total).toBeGreaterThan(2);
    const found = (await as(tok.admin1, 'GET', '/api/admin/mcp-servers?search=shared%20name')).json();
    expect(found.data.map((server: { name: string }) => server.name)).toEqual(['Shared Name']);
  });

  it('deletes one', async () => {
    const { data } = (await create(tok.admin1, named({ url: bearer.url }))).json();
    expect((await as(tok.admin1, 'DELETE', `/api/admin/mcp-server/${data._id}`)).json()).toEqual({ success: true, message: 'MCP server deleted' });
    expect((await as(tok.admin1, 'GET', `/api/admin/mcp-server/${data._id}`)).statusCode).toBe(404);
    expect((await as(tok.admin1, 'DELETE', `/api/admin/mcp-server/${data._id}`)).statusCode).toBe(404);
  });

  it("bulk-deletes only the caller's twins' servers and reports how many changed", async () => {
    const own = [(await create(tok.admin1, named({ url: bearer.url }))).json().data._id, (await create(tok.admin1, named({ url: bearer.url }))).json().data._id];
    const foreign = (await create(tok.admin2, named({ url: bearer.url }))).json().data._id;
    const response = await as(tok.admin1, 'POST', '/api/admin/mcp-servers/bulk-delete', { ids: [...own, foreign, 'ffffffffffffffffffffffff'] });
    expect(response.json()).toEqual({ success: true, changed: 2 });
    expect(await findMcpServerById(t.platform.database.db, own[0])).toBeUndefined();
    expect(await findMcpServerById(t.platform.database.db, foreign)).toBeDefined();
  });
});

describe('the OpenAPI document', () => {
  it('shows every connectors and tools route with its failure codes', async () => {
    const { paths } = (await t.app.inject({ method: 'GET', url: '/api/docs/json' })).json();
    const codes = (path: string, method: string) => Object.keys(paths[path][method].responses).sort();
    expect(codes('/api/admin/mcp-servers', 'get')).toEqual(['200', '400', '401', '403']);
    expect(codes('/api/admin/mcp-server', 'post')).toEqual(['201', '400', '401', '403', '404', '409']);
    expect(codes('/api/admin/mcp-server/{id}', 'get')).toEqual(['200', '400', '401', '404']);
    expect(codes('/api/admin/mcp-server/{id}', 'put')).toEqual(['200', '400', '401', '403', '404', '409']);
    expect(codes('/api/admin/mcp-server/{id}', 'delete')).toEqual(['200', '400', '401', '403', '404']);
    expect(codes('/api/admin/mcp-servers/bulk-delete', 'post')).toEqual(['200', '400', '401', '403']);
    expect(codes('/api/admin/mcp-server/{id}/refresh', 'post')).toEqual(['200', '400', '401', '403', '404']);
    expect(codes('/api/admin/tools', 'get')).toEqual(['200', '401', '403', '404']);
    expect(codes('/api/admin/tool/{name}', 'put')).toEqual(['200', '400', '401', '403', '404']);
    expect(paths['/api/admin/mcp-server'].post.description).toContain('CONNECTOR_URL_NOT_ALLOWED');
    const record = paths['/api/admin/mcp-server/{id}'].get.responses['200'].content['application/json'].schema.properties.data.properties;
    expect(record).toHaveProperty('hasCredential');
    expect(record).not.toHaveProperty('credential');
  });
});

describe('the credential in responses', () => {
  it('appears in no admin response body of this file', () => {
    expect(bodies.length).toBeGreaterThan(60);
    for (const body of bodies) for (const secret of CREDENTIALS) expect(body).not.toContain(secret);
  });
});
