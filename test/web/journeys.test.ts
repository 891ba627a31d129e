// The web client in a real browser (Debian's Chromium driven by playwright-core) against the real
// service, started as a deployment starts it (src/main.ts on a fresh embedded database, or a fresh
// PostgreSQL database with Redis when TEST_DATABASE_URL is set), with the fake model server on loopback.
// One browser for every journey, a fresh context (no shared storage) for each person. Each screen is
// checked with axe (no serious or critical violation) and photographed in light and dark mode into
// test-output/screenshots (WEB_SCREENSHOTS_DIR to change it).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../web/scripts/ensure-built.mjs';
import { openTestDatabase, type TestDatabase } from '../support/database.js';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.js';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { startProcess, stopProcess, type ServiceProcess } from '../support/processes.js';
import { until } from '../support/until.js';
import { checkScreen, launchBrowser, type Browser, type Page } from './browser.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve(process.env.WEB_SCREENSHOTS_DIR ?? 'test-output/screenshots');
const ADMIN = { email: 'root@example.test', password: 'a long admin password' };
const PASSWORD = 'person password 123';

let model: FakeModelServer;
let mcp: TestMcpServer;
let service: ServiceProcess;
let database: TestDatabase | undefined;
let dataDir: string;
let browser: Browser;
let adminToken: string;
let defaultTwinId: string;

async function call<T = Record<string, any>>(route: string, token: string | undefined, body?: unknown, method = body === undefined ? 'GET' : 'POST'): Promise<T> {
  const response = await fetch(`${service.url}${route}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { 'x-access-token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as T;
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function signInApi(email: string, password = PASSWORD): Promise<{ token: string; profile: Record<string, any>; mfaToken?: string }> {
  return call('/api/auth/signin', undefined, { email, password });
}

async function createPerson(email: string, fname: string): Promise<{ token: string; profile: Record<string, any> }> {
  await call('/api/admin/user', adminToken, { email, password: PASSWORD, fname });
  return signInApi(email);
}

/** The reset link's path of the last mail to `email` in the outbox (quoted-printable undone). */
function resetLinkFor(email: string): string | undefined {
  const outbox = path.join(dataDir, 'outbox');
  if (!existsSync(outbox)) return undefined;
  const mails = readdirSync(outbox)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => readFileSync(path.join(outbox, name), 'utf8').replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))))
    .filter((mail) => mail.includes(email));
  return /\/reset-password\?token=[^\s"<]+/.exec(mails.at(-1) ?? '')?.[0];
}

const totpOf = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });

beforeAll(async () => {
  ensureBuilt();
  if (!existsSync(CHROMIUM)) throw new Error(`The browser tests need Chromium at ${CHROMIUM} (apt-get install chromium)`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  model = await startFakeModelServer();
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'calendar-secret' });
  const env: Record<string, string> = {
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'sk-test',
    DEFAULT_PRICE_IN: '1',
    DEFAULT_PRICE_OUT: '1',
    STARTING_CREDITS: '1000',
    CONNECTOR_ALLOWED_HOSTS: '127.0.0.1',
  };
  if (process.env.TEST_DATABASE_URL) {
    database = await openTestDatabase();
    Object.assign(env, {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL ?? '',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
  } else Object.assign(env, { DATABASE_URL: '', REDIS_URL: '' });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'dt-web-'));
  service = await startProcess('src/main.ts', [], { DATA_DIR: dataDir, ...env });
  const admin = await signInApi(ADMIN.email, ADMIN.password);
  adminToken = admin.token;
  defaultTwinId = admin.profile.institution._id;
  browser = await launchBrowser(CHROMIUM);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stopProcess(service);
  await database?.close();
  await model?.close();
  await mcp?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1200, height: 800 } });
  return context.newPage();
}

async function signInUi(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto('/signin');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function ask(page: Page, question: string): Promise<void> {
  await page.getByLabel('Your question').fill(question);
  await page.getByLabel('Your question').press('Enter');
}

const lastAnswer = (page: Page) => page.locator('.message-answer').last();

/** A journey's time: the browser, axe in two modes and the service share two busy cores. */
const JOURNEY_MS = 120_000;
const POLL = { timeout: 15_000 };

describe('the web client in a browser', () => {
  it('signs in with an authenticator code', async () => {
    const ada = await createPerson('ada@example.test', 'Ada');
    const setup = await call<{ secret: string }>('/api/user/me/totp/setup', ada.token, {});
    // Confirmed with the previous step's code (accepted within one step): the sign-in's code below is then
    // a later step, never refused as a replay of this one.
    await call('/api/user/me/totp/confirm', ada.token, { code: totpOf(setup.secret).generate({ timestamp: Date.now() - 30_000 }) });

    const page = await newPage();
    await page.goto('/');
    await page.waitForURL('**/signin');
    await checkScreen(page, 'sign-in');
    await signInUi(page, 'ada@example.test');
    await expect.poll(() => page.getByRole('heading', { name: 'Two-step verification' }).isVisible(), POLL).toBe(true);
    await checkScreen(page, 'sign-in-second-factor');
    await page.getByLabel('Code from your authenticator app').fill(totpOf(setup.secret).generate());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByLabel('Your question').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(true);
    await checkScreen(page, 'chat-empty');
    await page.context().close();
  }, JOURNEY_MS);

  it('streams an answer, and stops it halfway', async () => {
    await createPerson('bea@example.test', 'Bea');
    const pieces = ['The ', 'answer ', 'starts ', 'here ', 'and ', 'goes ', 'on ', 'and ', 'on.'];
    model.setDefault({ chunks: pieces, stallAfter: 4 });
    const page = await newPage();
    await signInUi(page, 'bea@example.test');
    await page.getByLabel('Your question').waitFor();
    await ask(page, 'Tell me a long story');
    const answer = lastAnswer(page);
    await expect.poll(() => answer.innerText(), POLL).toContain('The answer starts here');
    expect(await answer.getAttribute('aria-busy')).toBe('true');
    expect(await answer.getAttribute('aria-live')).toBe('polite');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await expect.poll(() => answer.innerText(), POLL).toContain('Stopped.');
    const text = await answer.innerText();
    expect(text).not.toContain('goes on');
    // The stopped turn is a conversation of the list, and its record says so.
    await page.waitForURL(/\/c\/[0-9a-f]+/, POLL);
    const listed = page.getByRole('complementary', { name: 'Conversations' }).getByRole('link', { name: 'Tell me a long story' });
    await expect.poll(() => listed.isVisible(), POLL).toBe(true);

    model.setDefault({ chunks: ['Here is code:\n\n```js\nconst x = 1;\n```\n\n<img src=x onerror="window.__pwned=1"> **bold**'] });
    await ask(page, 'Show me code');
    await expect.poll(() => lastAnswer(page).locator('code.hljs').count(), POLL).toBe(1);
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), POLL).toBe('complete');
    expect(await lastAnswer(page).locator('strong').innerText()).toBe('bold');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await expect.poll(() => lastAnswer(page).getByRole('button', { name: 'Copy code' }).isVisible(), POLL).toBe(true);
    await checkScreen(page, 'chat-answer');
    await page.context().close();
  }, JOURNEY_MS);
  it("switches twin and shows that twin's assistants", async () => {
    const carol = await createPerson('carol@example.test', 'Carol');
    const twinB = await call<{ data: { _id: string } }>('/api/admin/institution', adminToken, { name: 'Twin B' });
    await call('/api/admin/user', adminToken, { email: ADMIN.email, institution: twinB.data._id, role: 'admin' });
    await call('/api/admin/user', adminToken, { email: carol.profile.email, institution: twinB.data._id, role: 'user' });
    await call('/api/user/assistant', adminToken, { name: 'Twin A Guide', institution: defaultTwinId, institution_shared: true });
    await call('/api/user/assistant', adminToken, { name: 'Twin B Helper', institution: twinB.data._id, institution_shared: true });

    const page = await newPage();
    await signInUi(page, 'carol@example.test');
    const picker = page.getByLabel('Assistant');
    const options = () => picker.locator('option').allInnerTexts();
    await expect.poll(options, POLL).toContain('Twin A Guide');
    expect(await options()).not.toContain('Twin B Helper');
    await page.getByLabel('Twin', { exact: true }).selectOption({ label: 'Twin B' });
    await expect.poll(options, POLL).toContain('Twin B Helper');
    expect(await options()).not.toContain('Twin A Guide');
    expect(await page.getByLabel('Twin', { exact: true }).locator('option:checked').innerText()).toBe('Twin B');
    await page.context().close();
  }, JOURNEY_MS);

  it('uploads a file, shows it ready, and answers from it with its source', async () => {
    const dan = await createPerson('dan@example.test', 'Dan');
    await call('/api/user/assistant', dan.token, { name: 'Files helper', ragEnabled: true, institution: '' });
    const page = await newPage();
    await signInUi(page, 'dan@example.test');
    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'nightjar.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('Project Nightjar notes.\n\nThe launch code of project Nightjar is PLUM-42. Keep it safe.\n'),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    const row = page.getByRole('row', { name: /nightjar\.txt/ });
    await expect.poll(() => row.locator('[data-status]').getAttribute('data-status'), { timeout: 30_000 }).toBe('ready');
    expect(await row.innerText()).toMatch(/Ready · \d+ passages?/);
    await checkScreen(page, 'files');

    model.setDefault({ chunks: ['The launch code is PLUM-42.'] });
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Assistant').selectOption({ label: 'Files helper' });
    await ask(page, 'What is the launch code of project Nightjar?');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), { timeout: 15_000 }).toBe('complete');
    const sources = lastAnswer(page).locator('details.sources');
    await sources.locator('summary').click();
    await expect.poll(() => sources.innerText(), POLL).toContain('nightjar.txt');
    expect(await sources.innerText()).toContain('PLUM-42');
    expect(model.requests.at(-1)!.system + JSON.stringify(model.requests.at(-1)!.messages)).toContain('PLUM-42');
    await page.context().close();
  }, JOURNEY_MS);

  it('uses a memory the person changed', async () => {
    const eve = await createPerson('eve@example.test', 'Eve');
    await call('/api/user/memory', eve.token, { key_name: 'favourite_colour', key_value: 'blue' });
    const page = await newPage();
    await signInUi(page, 'eve@example.test');
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByRole('button', { name: 'Edit favourite_colour' }).click();
    await page.getByLabel('Value of favourite_colour').fill('teal');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Your memories' }).innerText(), POLL).toContain('teal');
    expect(await page.getByRole('switch', { name: 'Enable User Memory' }).isChecked()).toBe(true);
    await checkScreen(page, 'memory');

    model.setDefault({ chunks: ['You like teal.'] });
    await page.getByRole('link', { name: 'Chat' }).click();
    await ask(page, 'Which colour do I like?');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), { timeout: 15_000 }).toBe('complete');
    const chat = model.requests.filter((request) => request.path.endsWith('/chat/completions')).at(-1)!;
    expect(chat.system).toContain('teal');
    expect(chat.system).not.toContain('blue');
    await page.context().close();
  }, JOURNEY_MS);

  it('sets up two-step verification, then signs in with a backup code', async () => {
    await createPerson('finn@example.test', 'Finn');
    const page = await newPage();
    await signInUi(page, 'finn@example.test');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).waitFor();
    await checkScreen(page, 'settings-two-step-setup');
    const secret = await page.getByTestId('totp-secret').innerText();
    await page.getByLabel('Code shown by the app').fill(totpOf(secret).generate());
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByRole('list', { name: 'Backup codes' }).locator('li');
    await expect.poll(() => codes.count(), POLL).toBe(10);
    const backup = (await codes.first().innerText()).trim();
    await checkScreen(page, 'settings-backup-codes');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/signin');
    await signInUi(page, 'finn@example.test');
    await page.getByRole('radio', { name: 'Backup code' }).check();
    await page.getByLabel('One of your backup codes').fill(backup);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByLabel('Your question').waitFor();
    // Used once: the same code no longer signs in.
    const again = await signInApi('finn@example.test');
    const reuse = await fetch(`${service.url}/api/auth/mfa-verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mfaToken: again.mfaToken, code: backup, method: 'backup' }),
    });
    expect(reuse.status).toBe(400);
    await page.context().close();
  }, JOURNEY_MS);

  it('says in words that the credits ran out (402)', async () => {
    const gus = await createPerson('gus@example.test', 'Gus');
    await call(`/api/admin/user/${gus.profile._id}`, adminToken, { credits: 0 }, 'PUT');
    model.setDefault({ chunks: ['Never sent.'] });
    const page = await newPage();
    await signInUi(page, 'gus@example.test');
    await ask(page, 'Can I still ask?');
    const alert = lastAnswer(page).getByRole('alert');
    await expect.poll(() => alert.innerText(), { timeout: 15_000 }).toContain('Out of credits');
    expect(await alert.innerText()).toContain("Ask your twin's administrator for more credits");
    await checkScreen(page, 'chat-out-of-credits');
    await page.context().close();
  }, JOURNEY_MS);

  it("shows a connector's approval card, and the tool runs only once approved", async () => {
    await createPerson('hana@example.test', 'Hana');
    await call('/api/admin/mcp-server', adminToken, { name: 'Calendar', url: mcp.url, credential: 'calendar-secret', requireApproval: true });
    const tools = await call<{ data: Array<{ name: string; tool: string }> }>('/api/admin/tools', adminToken);
    const echo = tools.data.find((tool) => tool.tool === 'echo')!.name;
    model.enqueue({ toolCalls: [{ id: 'call_web_1', name: echo, arguments: { text: 'hello calendar' } }] });
    model.setDefault({ chunks: ['Done: hello calendar.'] });

    const page = await newPage();
    await signInUi(page, 'hana@example.test');
    await ask(page, 'Echo hello calendar');
    const card = page.getByRole('alertdialog', { name: 'Allow echo on Calendar?' });
    await card.waitFor({ timeout: 15_000 });
    expect(await card.innerText()).toContain('hello calendar');
    expect(mcp.calls('echo')).toBe(0);
    await checkScreen(page, 'chat-approval-card');
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toContain('Done: hello calendar.');
    expect(mcp.calls('echo')).toBe(1);
    expect(await card.count()).toBe(0);
    await page.context().close();
  }, JOURNEY_MS);

  it('changes a password the administrator asked to change, and resets a forgotten one from the mailed link', async () => {
    await call('/api/admin/user', adminToken, { email: 'ivy@example.test', password: PASSWORD, fname: 'Ivy', mustChangePassword: true });
    const page = await newPage();
    await signInUi(page, 'ivy@example.test');
    await page.waitForURL('**/change-password');
    await checkScreen(page, 'forced-password-change');
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password 1');
    await page.getByLabel('Repeat the new password').fill('a brand new password 1');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByLabel('Your question').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill('ivy@example.test');
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByRole('status').filter({ hasText: 'we have emailed it a link' }).waitFor();
    await until(() => resetLinkFor('ivy@example.test') !== undefined, 15_000);
    await page.goto(resetLinkFor('ivy@example.test')!);
    await page.getByLabel('New password', { exact: true }).fill('the password after reset');
    await page.getByLabel('Repeat the new password').fill('the password after reset');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
    await signInUi(page, 'ivy@example.test', 'the password after reset');
    await page.getByLabel('Your question').waitFor();
    await page.context().close();
  }, JOURNEY_MS);
});
