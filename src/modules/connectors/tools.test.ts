// What a turn gets of the connectors (the ConnectorCatalog on app.connectors), against real MCP servers
// on loopback, and the admin tools list of the current twin with its toolsDisabled switches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.js';
import { until } from '../../../test/support/until.js';
import { findTwinById } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { createMcpPool } from '../../ai/mcp/mcp-pool.js';
import { createGuardedFetch } from '../../platform/net/guarded-fetch.js';
import { createOutboundPolicy } from '../../platform/net/outbound-guard.js';
import { createConnectorCatalog } from './connector-catalog.js';
import { slugOf, toolKey } from './tool-keys.js';

let t: TestApp;
let t1: TwinRow;
let t2: TwinRow;
let main: TestMcpServer;
let legacy: TestMcpServer;
const tok = {} as Record<'admin1' | 'admin2' | 'member' | 'super', string>;

const as = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: { 'x-access-token': token }, ...(payload === undefined ? {} : { payload: payload as object }) });
const addServer = async (token: string, body: object) => {
  const response = await as(token, 'POST', '/api/admin/mcp-server', body);
  expect(response.statusCode).toBe(201);
  return response.json().data as { _id: string; name: string };
};
const keysOf = async (twinId: string) => (await t.app.connectors.toolsFor(twinId)).map((tool) => tool.key).sort();

beforeAll(async () => {
  [main, legacy] = await Promise.all([
    startMcpServer({ transport: 'streamable-http', credential: 'catalog-secret' }),
    startMcpServer({ transport: 'sse', credential: 'legacy-secret', credentialHeader: 'X-Token' }),
  ]);
  t = await startTestApp({ env: { CONNECTOR_ALLOWED_HOSTS: '127.0.0.1', CONNECTOR_CALL_TIMEOUT_MS: '1500' } });
  const db = t.platform.database.db;
  t1 = await buildTwin(db);
  t2 = await buildTwin(db);
  const sign = async (options: Parameters<typeof buildUser>[1]) => signIn(t.app, (await buildUser(db, options)).user.email);
  tok.admin1 = await sign({ twin: t1, role: 'admin' });
  tok.admin2 = await sign({ twin: t2, role: 'admin' });
  tok.member = await sign({ twin: t1 });
  tok.super = await sign({ twin: t2, accountType: 'super' });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([main, legacy].map((server) => server?.close()));
});

describe('the catalog a turn uses', () => {
  let crm: { _id: string };
  let files: { _id: string };

  beforeAll(async () => {
    crm = await addServer(tok.admin1, { name: 'CRM Tools', url: main.url, credential: 'catalog-secret' });
    files = await addServer(tok.admin1, { name: 'Old Files', url: legacy.url, transport: 'sse', credential: 'legacy-secret', credentialHeader: 'X-Token', requireApproval: false, allowedTools: ['echo', 'slow'] });
    await addServer(tok.admin1, { name: 'Asleep', url: main.url, credential: 'catalog-secret', status: 'inactive' });
    await addServer(tok.admin2, { name: 'Other Twin', url: main.url, credential: 'catalog-secret' });
  });

  it("offers the twin's active servers' tools, allowedTools applied, with model-safe unique keys", async () => {
    const tools = await t.app.connectors.toolsFor(t1.id);
    expect(tools.map((tool) => tool.key).sort()).toEqual(['crm_tools__add', 'crm_tools__echo', 'crm_tools__fail', 'crm_tools__slow', 'old_files__echo', 'old_files__slow']);
    expect(tools.find((tool) => tool.key === 'crm_tools__add')).toEqual({
      key: 'crm_tools__add',
      serverId: crm._id,
      serverName: 'CRM Tools',
      tool: 'add',
      description: 'Adds two numbers',
      inputSchema: expect.objectContaining({ type: 'object', required: ['a', 'b'] }),
      requireApproval: true,
    });
    expect(tools.find((tool) => tool.key === 'old_files__echo')).toMatchObject({ serverId: files._id, requireApproval: false });
    for (const tool of tools) expect(tool.key).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(await keysOf(t2.id)).toEqual(['other_twin__add', 'other_twin__echo', 'other_twin__fail', 'other_twin__slow']);
  });

  it("adds every twin's servers, and tells apart two servers whose names make the same key", async () => {
    const global = await addServer(tok.super, { name: 'crm-tools', url: main.url, credential: 'catalog-secret', institution: null, allowedTools: ['echo'] });
    const prefix = `crm_tools_${global._id.slice(-6)}`;
    expect(await keysOf(t1.id)).toContain(`${prefix}__echo`);
    expect(await keysOf(t1.id)).toContain('crm_tools__echo');
    expect(await keysOf(t2.id)).toContain('crm_tools__echo');
    await as(tok.super, 'DELETE', `/api/admin/mcp-server/${global._id}`);
    expect(await keysOf(t1.id)).not.toContain(`${prefix}__echo`);
  });

  it('calls a tool with the credential (Streamable HTTP and SSE), and a tool failure resolves with isError', async () => {
    const before = main.calls('add');
    expect(await t.app.connectors.call(crm._id, 'add', { a: 20, b: 22 })).toEqual({ text: '42', isError: false, raw: [{ type: 'text', text: '42' }] });
    expect(main.calls('add')).toBe(before + 1);
    expect(await t.app.connectors.call(files._id, 'echo', { text: 'over sse' })).toMatchObject({ text: 'over sse', isError: false });
    expect(legacy.calls('echo')).toBe(1);
    expect(await t.app.connectors.call(crm._id, 'fail', { message: 'quota exceeded' })).toMatchObject({ text: 'quota exceeded', isError: true });
    const unknown = await t.app.connectors.call(crm._id, 'no_such_tool', {});
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('no_such_tool');
    const badArgs = await t.app.connectors.call(crm._id, 'add', { a: 'one' });
    expect(badArgs.isError).toBe(true);
    expect(main.calls('add')).toBe(before + 1);
    expect(main.refused() + legacy.refused()).toBe(0);
  });

  it('refuses a tool outside allowedTools, an inactive or unknown server, without calling it', async () => {
    await expect(t.app.connectors.call(files._id, 'add', { a: 1, b: 2 })).rejects.toMatchObject({ code: 'CONNECTOR_UNAVAILABLE' });
    expect(legacy.calls('add')).toBe(0);
    await expect(t.app.connectors.call('ffffffffffffffffffffffff', 'echo', { text: 'x' })).rejects.toMatchObject({ code: 'CONNECTOR_UNAVAILABLE' });
  });

  it('times out a slow call (CONNECTOR_CALL_TIMEOUT_MS), and the next call goes through', async () => {
    const started = Date.now();
    await expect(t.app.connectors.call(crm._id, 'slow', { ms: 10_000 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect((await t.app.connectors.call(crm._id, 'echo', { text: 'still here' })).text).toBe('still here');
  });

  it('reaches a server that dropped and came back on the same URL', async () => {
    const flaky = await startMcpServer({ transport: 'streamable-http', credential: 'flaky' });
    const server = await addServer(tok.admin1, { name: 'Flaky', url: flaky.url, credential: 'flaky' });
    expect((await t.app.connectors.call(server._id, 'echo', { text: 'one' })).text).toBe('one');
    await flaky.close();
    await expect(t.app.connectors.call(server._id, 'echo', { text: 'down' })).rejects.toMatchObject({ kind: 'unreachable' });
    const back = await startMcpServer({ transport: 'streamable-http', credential: 'flaky', port: flaky.port });
    expect((await t.app.connectors.call(server._id, 'echo', { text: 'two' })).text).toBe('two');
    expect(back.calls('echo')).toBe(1);
    await back.close();
  });

  it('follows an edit at once: a new credential is used, a deactivated or deleted server is gone', async () => {
    const rotating = await startMcpServer({ transport: 'streamable-http', credential: 'second' });
    const server = await addServer(tok.admin1, { name: 'Rotating', url: rotating.url, credential: 'first' });
    await expect(t.app.connectors.call(server._id, 'echo', { text: 'x' })).rejects.toMatchObject({ kind: 'refused' });
    await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${server._id}`, { credential: 'second' });
    expect((await t.app.connectors.call(server._id, 'echo', { text: 'rotated' })).text).toBe('rotated');
    expect(await keysOf(t1.id)).toContain('rotating__echo');

    await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${server._id}`, { status: 'inactive' });
    await until(async () => !(await keysOf(t1.id)).includes('rotating__echo'));
    await expect(t.app.connectors.call(server._id, 'echo', { text: 'x' })).rejects.toMatchObject({ code: 'CONNECTOR_UNAVAILABLE' });
    await as(tok.admin1, 'DELETE', `/api/admin/mcp-server/${server._id}`);
    await expect(t.app.connectors.call(server._id, 'echo', { text: 'x' })).rejects.toMatchObject({ code: 'CONNECTOR_UNAVAILABLE' });
    expect(rotating.calls('echo')).toBe(1);
    await rotating.close();
  });
});

describe('another process', () => {
  it("closes its client when a server is edited or deleted elsewhere (the row change notice), and reconnects with the new credential", async () => {
    const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }));
    const pool = createMcpPool({ fetch: guarded, timeoutMs: 1_500 });
    const elsewhere = createConnectorCatalog({ db: t.platform.database.db, secrets: t.platform.secrets, pool, changes: t.app.changes });
    const target = await startMcpServer({ transport: 'streamable-http', credential: 'one' });
    const server = await addServer(tok.admin1, { name: 'Shared Across', url: target.url, credential: 'one' });
    expect((await elsewhere.call(server._id, 'echo', { text: 'a' })).text).toBe('a');
    const opened = pool.versionOf(server._id);
    expect(opened).toBeDefined();

    // A save that changes nothing about the connection keeps the client.
    await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${server._id}`, { requireApproval: false });
    expect((await elsewhere.call(server._id, 'echo', { text: 'b' })).text).toBe('b');
    expect(pool.versionOf(server._id)).toBe(opened);

    await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${server._id}`, { credential: 'two' });
    await until(() => pool.versionOf(server._id) === undefined);
    expect(await elsewhere.call(server._id, 'echo', { text: 'c' }).catch((e: unknown) => e)).toMatchObject({ kind: 'refused' });

    await as(tok.admin1, 'PUT', `/api/admin/mcp-server/${server._id}`, { credential: 'one' });
    expect((await elsewhere.call(server._id, 'echo', { text: 'd' })).text).toBe('d');
    await as(tok.admin1, 'DELETE', `/api/admin/mcp-server/${server._id}`);
    await until(() => pool.versionOf(server._id) === undefined);
    expect(target.calls('echo')).toBe(3);
    await elsewhere.close();
    guarded.close();
    await target.close();
  });
});

describe('tool keys', () => {
  it('are model-safe and at most 64 characters, distinct for long tool names', () => {
    expect(slugOf('  Été & Co. — Search!  ')).toBe('ete_co_search');
    expect(slugOf('***')).toBe('server');
    expect(toolKey('crm', 'lookup.customer/by-id')).toBe('crm__lookup_customer_by-id');
    const long1 = toolKey('a_very_long_server_prefix', `${'x'.repeat(60)}1`);
    const long2 = toolKey('a_very_long_server_prefix', `${'x'.repeat(60)}2`);
    expect(long1).toHaveLength(64);
    expect(long1).not.toBe(long2);
    expect(long1).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe('GET /api/admin/tools and PUT /api/admin/tool/{name}', () => {
  it('lists the built-ins and the connector tools of the current twin, all enabled at first', async () => {
    const response = await as(tok.admin1, 'GET', '/api/admin/tools');
    expect(response.statusCode).toBe(200);
    const tools: Array<Record<string, unknown>> = response.json().data;
    expect(tools.slice(0, 3).map((tool) => tool.name)).toEqual(['file_search', 'memory', 'delegate']);
    expect(tools[0]).toMatchObject({ kind: 'builtin', enabled: true, server: null, tool: 'file_search', requireApproval: false });
    expect(tools.find((tool) => tool.name === 'crm_tools__add')).toMatchObject({ kind: 'connector', enabled: true, tool: 'add', server: { name: 'CRM Tools' }, requireApproval: true });
    expect(tools.map((tool) => tool.name)).not.toContain('other_twin__add');
    expect(tools.every((tool) => tool.enabled)).toBe(true);
  });

  it("disables and enables a tool through the twin's toolsDisabled", async () => {
    const put = (name: string, enabled: unknown) => as(tok.admin1, 'PUT', `/api/admin/tool/${name}`, { enabled });
    const disabled = await put('crm_tools__add', false);
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json().data).toMatchObject({ name: 'crm_tools__add', enabled: false, kind: 'connector' });
    expect((await put('memory', false)).json().data).toMatchObject({ name: 'memory', enabled: false });
    expect((await put('memory', false)).statusCode).toBe(200);
    expect((await findTwinById(t.platform.database.db, t1.id))!.toolsDisabled).toEqual(['crm_tools__add', 'memory']);
    const listed = (await as(tok.admin1, 'GET', '/api/admin/tools')).json().data as Array<{ name: string; enabled: boolean }>;
    expect(listed.filter((tool) => !tool.enabled).map((tool) => tool.name)).toEqual(['memory', 'crm_tools__add']);

    expect((await put('crm_tools__add', true)).json().data.enabled).toBe(true);
    expect((await findTwinById(t.platform.database.db, t1.id))!.toolsDisabled).toEqual(['memory']);
    // The other twin's switches are its own.
    expect((await findTwinById(t.platform.database.db, t2.id))!.toolsDisabled).toEqual([]);
  });

  it('answers 404 for a tool the twin does not have, 400 for a bad body, 403 for a plain member', async () => {
    const unknown = await as(tok.admin1, 'PUT', '/api/admin/tool/no_such_tool', { enabled: false });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ success: false, code: 'TOOL_NOT_FOUND', message: 'Tool not found' });
    expect((await as(tok.admin1, 'PUT', '/api/admin/tool/other_twin__add', { enabled: false })).statusCode).toBe(404);
    expect((await as(tok.admin1, 'PUT', '/api/admin/tool/memory', { enabled: 'no' })).statusCode).toBe(400);
    expect((await as(tok.admin1, 'PUT', '/api/admin/tool/memory', {})).statusCode).toBe(400);
    expect((await as(tok.member, 'GET', '/api/admin/tools')).statusCode).toBe(403);
    expect((await as(tok.member, 'PUT', '/api/admin/tool/memory', { enabled: true })).statusCode).toBe(403);
    expect((await findTwinById(t.platform.database.db, t1.id))!.toolsDisabled).toEqual(['memory']);
  });
});
