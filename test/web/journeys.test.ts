// The web client in a real browser (Debian's Chromium driven by playwright-core) against the real
// service, started as a deployment starts it (dist/main.js on a fresh embedded database, or a fresh
// PostgreSQL database with Redis when TEST_DATABASE_URL is set), with the fake model server on loopback.
// One browser for every journey, a fresh context (no shared storage) for each person. Each screen is
// checked with axe (no serious or critical violation) and photographed in light and dark mode into
// test-output/screenshots (WEB_SCREENSHOTS_DIR to change it).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { Secret, TOTP } from 'otpauth';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.js';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { startIdentityProvider, type TestIdentityProvider } from '../support/oidc-provider.js';
import { freePort } from '../support/processes.js';
import { until } from '../support/until.js';
import { callService, checkScreen, CHROMIUM, launchBrowser, prepareBrowserTests, recordFailure, startWebService, type Browser, type Page, type Route, type WebService } from './browser.js';

const ADMIN = { email: 'root@example.test', password: 'a long admin password' };
const PASSWORD = 'person password 123';

let model: FakeModelServer;
let mcp: TestMcpServer;
let idp: TestIdentityProvider;
let service: WebService;
let browser: Browser;
let adminToken: string;
let defaultTwinId: string;

const call = <T = Record<string, any>>(route: string, token: string | undefined, body?: unknown, method?: string): Promise<T> =>
  callService<T>(service.url, route, token, body, method);

async function signInApi(email: string, password = PASSWORD): Promise<{ token: string; profile: Record<string, any>; mfaToken?: string }> {
  return call('/api/auth/signin', undefined, { email, password });
}

async function createPerson(email: string, fname: string): Promise<{ token: string; profile: Record<string, any> }> {
  await call('/api/admin/user', adminToken, { email, password: PASSWORD, fname });
  return signInApi(email);
}

/** The mails to `email` in the outbox, oldest first (quoted-printable undone). */
function mailsTo(email: string): string[] {
  const outbox = path.join(service.dataDir, 'outbox');
  if (!existsSync(outbox)) return [];
  return readdirSync(outbox)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => readFileSync(path.join(outbox, name), 'utf8').replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))))
    .filter((mail) => mail.includes(email));
}

/** The reset link's path of the last mail to `email`. */
function resetLinkFor(email: string): string | undefined {
  return /\/reset-password\?token=[^\s"<]+/.exec(mailsTo(email).at(-1) ?? '')?.[0];
}

/** The `count`-th code mailed to `email` (sign-in or step-up), once it is in the outbox. */
async function mailedCode(email: string, count: number): Promise<string> {
  const codes = () => mailsTo(email).flatMap((mail) => /Your sign-in code is (\d{6})/.exec(mail)?.[1] ?? []);
  await until(() => codes().length >= count, 15_000);
  return codes()[count - 1];
}

const totpOf = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });

beforeAll(async () => {
  await prepareBrowserTests();
  model = await startFakeModelServer();
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'calendar-secret' });
  // A sign-in provider registered for the service's own address, known before it starts.
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  idp = await startIdentityProvider([{ client_id: 'web', client_secret: 'web-secret', redirect_uris: [`${publicUrl}/api/auth/oauth/school/callback`] }]);
  service = await startWebService({
    PORT: String(port),
    PUBLIC_URL: publicUrl,
    OIDC_PROVIDERS: JSON.stringify([{ id: 'school', name: 'School Login', issuer: idp.issuer, clientId: 'web', clientSecret: 'web-secret' }]),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'sk-test',
    DEFAULT_PRICE_IN: '1',
    DEFAULT_PRICE_OUT: '1',
    STARTING_CREDITS: '1000',
    CONNECTOR_ALLOWED_HOSTS: '127.0.0.1',
  });
  const admin = await signInApi(ADMIN.email, ADMIN.password);
  adminToken = admin.token;
  defaultTwinId = admin.profile.institution._id;
  browser = await launchBrowser(CHROMIUM);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await model?.close();
  await mcp?.close();
  await idp?.close();
});

/** The pages of the running test, photographed if it fails. */
const pagesOfTest = new Set<Page>();

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  pagesOfTest.add(page);
  return page;
}

afterEach(async (context) => {
  if (context.task.result?.state === 'fail') await recordFailure(pagesOfTest, context.task.name);
  pagesOfTest.clear();
});

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

/** The session token the page holds. */
const tokenOf = async (page: Page): Promise<string> => (await page.evaluate(() => localStorage.getItem('dt.token')))!;

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
    // Choosing an emailed code mails one; the authenticator still works after.
    await page.getByRole('radio', { name: 'Emailed code' }).check();
    await expect.poll(() => page.locator('#mfa-help').innerText(), POLL).toBe('We emailed a code to ada@example.test.');
    expect(await mailedCode('ada@example.test', 1)).toMatch(/^\d{6}$/);
    await page.getByRole('radio', { name: 'Authenticator app' }).check();
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

    // An empty answer is the try-again notice, and Try again asks the same question again; so does Regenerate.
    model.setDefault({ chunks: [] });
    await ask(page, 'Say something');
    const tryAgain = lastAnswer(page).getByRole('button', { name: 'Try again' });
    await tryAgain.waitFor(POLL);
    expect(await lastAnswer(page).getByRole('status').innerText()).toContain('The model returned an empty answer. Please try again.');
    model.setDefault({ chunks: ['Something, at last.'] });
    await tryAgain.click();
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toContain('Something, at last.');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), POLL).toBe('complete');
    model.setDefault({ chunks: ['Something else, regenerated.'] });
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toContain('Something else, regenerated.');
    expect(await page.locator('.message-question').last().innerText()).toContain('Say something');
    expect(JSON.stringify(model.requests.at(-1)!.messages.at(-1))).toContain('Say something');
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
    // A confidential file: answers quote it only redacted.
    await page.getByLabel('Confidential (answers quote it only redacted)').check();
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'kestrel.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(`Project Kestrel briefing for the steering group, restricted distribution, do not forward or print. The vault code of project Kestrel is FIG-77.\n`),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    const secretRow = page.getByRole('row', { name: /kestrel\.txt/ });
    await expect.poll(() => secretRow.locator('[data-status]').getAttribute('data-status'), { timeout: 30_000 }).toBe('ready');
    expect(await secretRow.innerText()).toContain('Confidential');

    model.setDefault({ chunks: ['The launch code is PLUM-42.'] });
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Assistant').selectOption({ label: 'Files helper' });
    await ask(page, 'What is the launch code of project Nightjar?');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), { timeout: 15_000 }).toBe('complete');
    const sources = lastAnswer(page).locator('details.sources');
    await sources.locator('summary').click();
    await expect.poll(() => sources.innerText(), POLL).toContain('nightjar.txt');
    expect(await sources.innerText()).toContain('PLUM-42');
    await checkScreen(page, 'chat-sources');
    // Feedback on the answer: the button shows it pressed, and the record keeps it.
    await lastAnswer(page).getByRole('button', { name: 'Helpful', exact: true }).click();
    await expect.poll(() => lastAnswer(page).getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed'), POLL).toBe('true');

    // The confidential file's passage is shown redacted, and labelled so.
    model.setDefault({ chunks: ['That code is confidential.'] });
    await ask(page, 'What is the vault code of project Kestrel?');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), { timeout: 15_000 }).toBe('complete');
    const redacted = lastAnswer(page).locator('details.sources');
    await redacted.locator('summary').click();
    const kestrel = redacted.getByRole('listitem').filter({ hasText: 'kestrel.txt' });
    await expect.poll(() => kestrel.innerText(), POLL).toContain('Redacted');
    expect(await kestrel.innerText()).toContain('Project Kestrel briefing');
    expect(await kestrel.innerText()).not.toContain('FIG-77');
    expect(model.requests.at(-1)!.system + JSON.stringify(model.requests.at(-1)!.messages)).toContain('PLUM-42');
    await page.context().close();
  }, JOURNEY_MS);

  it('leaves the person on the page they went to when the answer they asked from the start page ends', async () => {
    await createPerson('gus@example.test', 'Gus');
    const page = await newPage();
    await signInUi(page, 'gus@example.test');
    await page.getByLabel('Your question').waitFor();
    // Held: the conversation list fetched again at the answer's end, and the memory page's code, so that
    // the answer ends while the way to the memory page is still under way.
    const held: Array<() => void> = [];
    const hold = (route: Route) => new Promise<void>((resolve) => held.push(() => void route.continue().then(resolve, resolve)));
    let listRefetched = false;
    await page.route((url) => url.pathname === '/api/user/history' && url.searchParams.get('page') === '1', (route) => ((listRefetched = true), hold(route)));
    await page.route((url) => /\/MemoryPage-[^/]*\.js$/.test(url.pathname), hold);
    model.setDefault({ chunks: ['A short answer.'] });
    await ask(page, 'A question from the start page');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), { timeout: 15_000 }).toBe('complete');
    await expect.poll(() => listRefetched, POLL).toBe(true);
    await page.getByRole('link', { name: 'Memory' }).click();
    await expect.poll(() => held.length, POLL).toBe(2);
    for (const release of held.splice(0)) release();
    await page.unrouteAll({ behavior: 'wait' });
    await page.getByRole('switch', { name: 'Enable User Memory' }).waitFor(POLL);
    await page.waitForLoadState('networkidle');
    expect(new URL(page.url()).pathname).toBe('/memory');
    expect(await page.getByRole('switch', { name: 'Enable User Memory' }).isVisible()).toBe(true);
    await page.context().close();
  }, JOURNEY_MS);

  it("says a page could not be shown where it failed, keeps the way around it, and shows it after a reload", async () => {
    await createPerson('hal@example.test', 'Hal');
    const page = await newPage();
    await signInUi(page, 'hal@example.test');
    await page.getByLabel('Your question').waitFor();
    // The files page's code does not arrive: a dropped connection, or the service updated under the tab.
    await page.route((url) => /\/FilesPage-[^/]*\.js$/.test(url.pathname), (route) => route.abort('connectionreset'));
    await page.getByRole('link', { name: 'Files' }).click();
    const failed = page.getByRole('alert').filter({ hasText: 'This page could not be shown' });
    await failed.waitFor(POLL);
    expect(await failed.innerText()).toContain('Its code could not be loaded');
    expect(new URL(page.url()).pathname).toBe('/files');
    await checkScreen(page, 'screen-failed');
    // The navigation around it stays, and another page shows as usual.
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByRole('switch', { name: 'Enable User Memory' }).waitFor(POLL);
    expect(await failed.count()).toBe(0);
    // Back on the failed page, its code reachable again: the reload shows it.
    await page.getByRole('link', { name: 'Files' }).click();
    await failed.waitFor(POLL);
    await page.unrouteAll({ behavior: 'wait' });
    await page.getByRole('button', { name: 'Reload the page' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor(POLL);
    expect(await failed.count()).toBe(0);
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

    // Enable User Memory off: the entries stay listed, and none is used.
    await page.getByRole('link', { name: 'Memory' }).click();
    const memorySwitch = page.getByRole('switch', { name: 'Enable User Memory' });
    await memorySwitch.click();
    await page.getByText('Personal memory is off: none is used and none is saved.').waitFor(POLL);
    expect(await memorySwitch.isChecked()).toBe(false);
    expect(await page.getByRole('region', { name: 'Your memories' }).innerText()).toContain('teal');
    await checkScreen(page, 'memory-off');
    model.setDefault({ chunks: ['I do not know your colour.'] });
    await page.getByRole('link', { name: 'Chat' }).click();
    await ask(page, 'Which colour do I like now?');
    await expect.poll(() => lastAnswer(page).getAttribute('data-status'), { timeout: 15_000 }).toBe('complete');
    const withoutMemory = model.requests.filter((request) => request.path.endsWith('/chat/completions')).at(-1)!;
    expect(JSON.stringify(withoutMemory.messages) + withoutMemory.system).toContain('Which colour do I like now?');
    expect(withoutMemory.system).not.toContain('teal');
    await page.context().close();
  }, JOURNEY_MS);

  it('sets up two-step verification, then signs in with a backup code', async () => {
    await createPerson('finn@example.test', 'Finn');
    const page = await newPage();
    await signInUi(page, 'finn@example.test');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await checkScreen(page, 'settings');
    // Dark mode is the person's dark_mode setting: the page turns dark at once, and stays so.
    await page.getByRole('switch', { name: 'Dark mode' }).click();
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme), POLL).toBe('dark');
    expect((await call<{ data: { dark_mode: boolean } }>('/api/user/setting', await tokenOf(page))).data.dark_mode).toBe(true);
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
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await checkScreen(page, 'forgot-password');
    await page.getByLabel('Email').fill('ivy@example.test');
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByRole('status').filter({ hasText: 'we have emailed it a link' }).waitFor();
    await until(() => resetLinkFor('ivy@example.test') !== undefined, 15_000);
    await page.goto(resetLinkFor('ivy@example.test')!);
    await page.getByLabel('New password', { exact: true }).waitFor();
    await checkScreen(page, 'reset-password');
    await page.getByLabel('New password', { exact: true }).fill('the password after reset');
    await page.getByLabel('Repeat the new password').fill('the password after reset');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
    await signInUi(page, 'ivy@example.test', 'the password after reset');
    await page.getByLabel('Your question').waitFor();
    await page.context().close();
  }, JOURNEY_MS);

  it('lists conversations grouped, finds one by its text, and deletes one', async () => {
    const kai = await createPerson('kai@example.test', 'Kai');
    const asked = async (question: string, answer: string, conversationId?: string) => {
      model.setDefault({ chunks: [answer] });
      return call<{ conversationId: string }>('/api/ai/personal/qanda', kai.token, { inputs: [question], requestArgs: conversationId ? { conversationId } : {} });
    };
    const garden = await asked(
      'Plan my vegetable garden',
      'Start with **tomatoes** and beans:\n\n1. Tomatoes in the sunniest bed, 60 cm apart.\n2. Climbing beans along the fence.\n3. Lettuce between them, sown every three weeks.',
    );
    await asked('When do I sow the beans?', 'Sow them outdoors in **May**, once the soil is warm. Soak the seeds overnight first.', garden.conversationId);
    await asked('Tell me about owls', 'Owls hunt at night, unlike the nightingale that sings then.');

    const page = await newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await signInUi(page, 'kai@example.test');
    const list = page.getByRole('complementary', { name: 'Conversations' });
    const titles = () => list.getByRole('listitem').getByRole('link').allInnerTexts();
    // Two turns of one conversation are one entry, named by its first question.
    await expect.poll(titles, POLL).toEqual(['Tell me about owls', 'Plan my vegetable garden']);
    await list.getByRole('link', { name: 'Plan my vegetable garden' }).click();
    await expect.poll(() => page.locator('.message-answer').count(), POLL).toBe(2);
    expect(await page.getByRole('region', { name: 'Conversation' }).innerText()).toMatch(/tomatoes[\s\S]*Sow them outdoors in May/);
    // The README's picture of the chat (light mode), when asked for: WEB_README_SCREENSHOT=docs/images/chat.png.
    if (process.env.WEB_README_SCREENSHOT) await page.screenshot({ path: path.resolve(process.env.WEB_README_SCREENSHOT) });

    // Search finds by what was answered too.
    const search = list.getByLabel('Search conversations');
    await search.fill('NIGHTINGALE');
    await expect.poll(titles, POLL).toEqual(['Tell me about owls']);
    await checkScreen(page, 'chat-conversation-search');
    await search.fill('sow');
    await expect.poll(titles, POLL).toEqual(['Plan my vegetable garden']);
    await search.fill('penguins');
    await expect.poll(() => list.innerText(), POLL).toContain('No conversation matches.');
    await search.fill('');

    // Deleting the open conversation removes it, and leaves for a new one.
    await list.getByRole('button', { name: 'Delete conversation: Plan my vegetable garden' }).click();
    await expect.poll(titles, POLL).toEqual(['Tell me about owls']);
    await page.waitForURL((url) => url.pathname === '/', POLL);
    await page.reload();
    await expect.poll(titles, POLL).toEqual(['Tell me about owls']);
    const left = await call<{ data: Array<{ question: string }> }>('/api/user/history', kai.token);
    expect(left.data.map((record) => record.question)).toEqual(['Tell me about owls']);

    // The compact mode an embedding page uses: the chat alone.
    await page.goto('/?embed=1');
    await page.getByLabel('Your question').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).count()).toBe(0);
    expect(await list.count()).toBe(0);
    await checkScreen(page, 'chat-embedded');
    await page.context().close();
  }, JOURNEY_MS);

  it('keeps files in a collection: live ingestion, text edit, and the collection as a ZIP', async () => {
    await createPerson('lea@example.test', 'Lea');
    const page = await newPage();
    await signInUi(page, 'lea@example.test');
    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByLabel('New collection').fill('Heron papers');
    await page.getByRole('button', { name: 'Create' }).click();
    const show = page.getByLabel('Show');
    await expect.poll(() => show.locator('option:checked').innerText(), POLL).toBe('Heron papers (0)');

    // Every status the file's row shows, as the person would see it change.
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { __statuses: string[] }).__statuses = []);
      new MutationObserver(() => {
        for (const cell of document.querySelectorAll('td[data-status]')) if (seen.at(-1) !== cell.textContent) seen.push(cell.textContent ?? '');
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const statuses = () => page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses);
    const paragraph = (n: number) => `Paragraph ${n} of the Heron field notes: the grey heron waits at the edge of the reed bed for fish, frogs and voles. `.repeat(6);
    const original = `Project Heron notes.\n\n${Array.from({ length: 60 }, (_, n) => paragraph(n)).join('\n\n')}\n`;
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'heron.txt', mimeType: 'text/plain', buffer: Buffer.from(original) });
    await page.getByRole('button', { name: 'Upload' }).click();
    const row = page.getByRole('row', { name: /heron\.txt/ });
    await expect.poll(() => row.locator('[data-status]').getAttribute('data-status'), { timeout: 60_000 }).toBe('ready');
    const stage = /^(Reading the text|Splitting into passages|Checking the passages|Indexing for search|Finishing)… \d+%$/;
    expect((await statuses()).some((text) => stage.test(text)), (await statuses()).join(' | ')).toBe(true);
    expect(await row.innerText()).toMatch(/Ready · \d+ passages/);
    await expect.poll(() => show.locator('option:checked').innerText(), POLL).toBe('Heron papers (1)');
    await checkScreen(page, 'files-collection');

    // The text edit: the new content is saved, and the file is read again from the start.
    await row.getByRole('button', { name: 'Edit heron.txt' }).click();
    const content = page.getByLabel('Content');
    await expect.poll(() => content.inputValue(), POLL).toContain('Project Heron notes.');
    await checkScreen(page, 'files-edit');
    const edited = 'Project Heron notes, revised.\n\nThe heron nests in the tall alder by the mill pond.\n';
    await content.fill(edited);
    await page.getByRole('button', { name: 'Save and re-index' }).click();
    await expect.poll(() => content.count(), POLL).toBe(0);
    await expect.poll(() => row.innerText(), { timeout: 30_000 }).toMatch(/Ready · 1 passage\b/);

    // The collection as a ZIP holds the file as it now reads.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download as ZIP' }).click()]);
    expect(download.suggestedFilename()).toBe('Heron papers.zip');
    const zip = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    const names = Object.keys(zip);
    expect(names).toEqual([expect.stringContaining('heron.txt')]);
    expect(strFromU8(zip[names[0]])).toBe(edited);
    await page.context().close();
  }, JOURNEY_MS);

  it('signs in with an emailed code: a new code replaces the old one, and too many are refused in words', async () => {
    const jon = await createPerson('jon@example.test', 'Jon');
    await call(`/api/admin/user/${jon.profile._id}`, adminToken, { mfaEnabled: true }, 'PUT');
    const page = await newPage();
    await signInUi(page, 'jon@example.test');
    const help = page.locator('#mfa-help');
    await expect.poll(() => help.innerText(), POLL).toBe('We emailed a code to jon@example.test.');
    const first = await mailedCode('jon@example.test', 1);
    await page.getByRole('button', { name: 'Email me a new code' }).click();
    await expect.poll(() => help.innerText(), POLL).toBe('A new code has been sent to your email. Earlier codes no longer work.');
    let latest = await mailedCode('jon@example.test', 2);
    const codeField = page.getByLabel('Code from the email we sent you');
    if (first !== latest) {
      await codeField.fill(first);
      await page.getByRole('button', { name: 'Verify' }).click();
      await expect.poll(() => page.getByRole('alert').innerText(), POLL).toContain('That code is not right');
      await checkScreen(page, 'sign-in-emailed-code');
    }
    // Five codes for one sign-in: the sixth is refused, in words.
    for (let count = 3; count <= 5; count++) {
      await page.getByRole('button', { name: 'Email me a new code' }).click();
      latest = await mailedCode('jon@example.test', count);
    }
    await page.getByRole('button', { name: 'Email me a new code' }).click();
    await expect.poll(() => page.getByRole('alert').innerText(), POLL).toContain('Too many attempts');
    expect(await page.getByRole('alert').innerText()).toContain('Too many codes sent');
    await codeField.fill(latest);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByLabel('Your question').waitFor();
    await page.context().close();
  }, JOURNEY_MS);

  it("signs in with the deployment's sign-in provider, and then with its second factor", async () => {
    idp.accounts.set('cleo-at-school', { email: 'cleo@example.test', given_name: 'Cleo', family_name: 'Lane' });
    idp.signInAs('cleo-at-school');
    const page = await newPage();
    await page.goto('/signin');
    const provider = page.getByRole('navigation', { name: 'Other ways to sign in' }).getByRole('link', { name: 'Continue with School Login' });
    await provider.waitFor();
    await checkScreen(page, 'sign-in-providers');
    await provider.click();
    // Out to the provider and back: the callback hands the session to /signin/oauth, which lands on the chat.
    await page.getByLabel('Your question').waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    const cleo = await call<{ profile: Record<string, any> }>('/api/user/refresh/profile', await tokenOf(page), {});
    expect(cleo.profile).toMatchObject({ email: 'cleo@example.test', fname: 'Cleo', lname: 'Lane' });
    expect(await page.context().cookies()).not.toContainEqual(expect.objectContaining({ name: 'dt_oauth_handoff' }));
    await page.context().close();

    // With two-step verification on, the provider's sign-in asks for the mailed code.
    await call(`/api/admin/user/${cleo.profile._id}`, adminToken, { mfaEnabled: true }, 'PUT');
    const again = await newPage();
    await again.goto('/signin');
    await again.getByRole('link', { name: 'Continue with School Login' }).click();
    await expect.poll(() => again.locator('#mfa-help').innerText(), POLL).toBe('We emailed a code to you.');
    expect(new URL(again.url()).pathname).toBe('/signin/oauth');
    await again.getByLabel('Code from the email we sent you').fill(await mailedCode('cleo@example.test', 1));
    await again.getByRole('button', { name: 'Verify' }).click();
    await again.getByLabel('Your question').waitFor();

    // A page reload of /signin/oauth has nothing to collect: it says so, and offers the sign-in again.
    const stale = await newPage();
    await stale.goto('/signin/oauth');
    await expect.poll(() => stale.getByRole('alert').innerText(), POLL).toContain('No sign-in to collect');
    await stale.getByRole('link', { name: 'Continue with School Login' }).waitFor(POLL);
    await again.context().close();
    await stale.context().close();
  }, JOURNEY_MS);

  it("signs in with a twin's own provider from /signin?twin=<publicId>, in a session limited to that twin", async () => {
    // The twin's provider is made first (its id is in the redirect address), then pointed at a provider that knows it.
    const created = await call<{ data: { _id: string } }>('/api/admin/sso-provider', adminToken, { name: 'Twin Login', issuer: 'http://127.0.0.1:9', clientId: 'twin-web' });
    const twinIdp = await startIdentityProvider([
      { client_id: 'twin-web', client_secret: 'twin-secret', redirect_uris: [`${service.url}/api/auth/oauth/${created.data._id}/callback`] },
    ]);
    try {
      await call(`/api/admin/sso-provider/${created.data._id}`, adminToken, { issuer: twinIdp.issuer, clientSecret: 'twin-secret' }, 'PUT');
      twinIdp.accounts.set('dev-at-twin', { email: 'dev@example.test', given_name: 'Dev', family_name: 'Rao' });
      twinIdp.signInAs('dev-at-twin');
      const admin = await call<{ profile: { institution: { publicId: string } } }>('/api/user/refresh/profile', adminToken, {});
      const page = await newPage();
      // Without the twin, only the deployment's providers are offered.
      await page.goto('/signin');
      await page.getByRole('link', { name: 'Continue with School Login' }).waitFor(POLL);
      expect(await page.getByRole('link', { name: 'Continue with Twin Login' }).count()).toBe(0);
      await page.goto(`/signin?twin=${admin.profile.institution.publicId}`);
      await page.getByRole('link', { name: 'Continue with Twin Login' }).click();
      await page.getByLabel('Your question').waitFor();
      const dev = await call<{ profile: Record<string, any> }>('/api/user/refresh/profile', await tokenOf(page), {});
      expect(dev.profile).toMatchObject({ email: 'dev@example.test', fname: 'Dev' });
      expect(dev.profile.institution._id).toBe(defaultTwinId);
      // Limited to the twin: the authenticator set-up asks to confirm it is them first.
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.getByRole('alert').filter({ hasText: 'Confirm it is you' }).waitFor(POLL);
      await page.context().close();
    } finally {
      await twinIdp.close();
    }
  }, JOURNEY_MS);

  it('opens a launch session, and unlocks the rest with an emailed code (403 LAUNCH_SCOPE_STEP_UP)', async () => {
    const launch = await call<{ token: string }>('/api/auth/sdk-sign', adminToken, { email: 'kim@example.test', fname: 'Kim' });
    const page = await newPage();
    await page.goto(`/launch#token=${encodeURIComponent(launch.token)}`);
    await page.getByLabel('Your question').waitFor();
    expect(new URL(page.url()).hash).toBe('');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'Confirm it is you' });
    await notice.waitFor(POLL);
    expect(await notice.innerText()).toContain('This session is limited to the twin it was opened for');
    await notice.getByRole('button', { name: 'Email me a code' }).click();
    const first = await mailedCode('kim@example.test', 1);
    await notice.getByRole('button', { name: 'Email me a new code' }).click();
    await notice.getByText('We emailed you a new code; the earlier one no longer works.').waitFor(POLL);
    const second = await mailedCode('kim@example.test', 2);
    await checkScreen(page, 'settings-step-up');
    if (first !== second) {
      await notice.getByLabel('Code from the email').fill(first);
      await notice.getByRole('button', { name: 'Confirm' }).click();
      await expect.poll(() => notice.innerText(), POLL).toContain('That code is not right');
    }
    await notice.getByLabel('Code from the email').fill(second);
    await notice.getByRole('button', { name: 'Confirm' }).click();
    await notice.getByText('Confirmed: this session may now do everything your account may.').waitFor(POLL);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).waitFor(POLL);

    // A launch link works once: opened again, it says so.
    await page.goto(`/launch#token=${encodeURIComponent(launch.token)}`);
    await expect.poll(() => page.getByRole('alert').innerText(), POLL).toContain('This link no longer works');
    await checkScreen(page, 'launch-used-link');
    await page.context().close();
  }, JOURNEY_MS);

  it("says in words that a twin's caps are reached (429 daily limit, the file limit)", async () => {
    const capped = await call<{ data: { _id: string } }>('/api/admin/institution', adminToken, { name: 'Capped Twin' });
    await call(`/api/admin/institution/${capped.data._id}`, adminToken, { userDailyLimit: 0, maxFiles: 1 }, 'PUT');
    await call('/api/admin/user', adminToken, { email: 'max@example.test', password: PASSWORD, fname: 'Max', institution: capped.data._id, role: 'user' });
    const max = await signInApi('max@example.test');
    await call('/api/user/institution/switch', max.token, { institutionId: capped.data._id });
    const page = await newPage();
    await signInUi(page, 'max@example.test');
    await ask(page, 'One more question?');
    const alert = lastAnswer(page).getByRole('alert');
    await expect.poll(() => alert.innerText(), { timeout: 15_000 }).toContain('Daily limit reached');
    expect(await alert.innerText()).toContain('You have reached your daily usage limit for this Digital Twin');
    await checkScreen(page, 'chat-daily-limit');

    await page.getByRole('link', { name: 'Files' }).click();
    for (const name of ['one.txt', 'two.txt']) {
      await page.getByLabel('File', { exact: true }).setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from(`The file ${name}.\n`) });
      await page.getByRole('button', { name: 'Upload' }).click();
      if (name === 'one.txt') await page.getByRole('row', { name: /one\.txt/ }).waitFor(POLL);
    }
    const refusal = page.getByRole('region', { name: 'Add a file' }).getByRole('alert');
    await expect.poll(() => refusal.innerText(), POLL).toContain('File limit reached');
    expect(await refusal.innerText()).toContain("limit of 1 files");
    await page.context().close();
  }, JOURNEY_MS);

  it('shows the admin area to an administrator', async () => {
    const page = await newPage();
    await signInUi(page, ADMIN.email, ADMIN.password);
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await checkScreen(page, 'admin');
    await page.context().close();
  }, JOURNEY_MS);
});
