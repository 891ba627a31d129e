// The administration console in a real browser (Debian's Chromium through playwright-core) against the
// real service started as a deployment starts it, with the fake model and MCP servers on loopback.
// A super admin, a twin admin and a plain user each see exactly the families their permissions allow;
// the twin admin's journey goes through people, the CSV import, histories, MCP servers, tools,
// questions (then seen on the chat's start screen) and the usage chart; every console screen passes
// axe in light and dark mode and is photographed (test-output/screenshots/console-*.png).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILIES } from '../../web/src/admin/families.js';
import { DEVICE_CLIENT_ID, startDeviceProvider, type TestDeviceProvider } from '../support/device-provider.js';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.js';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { freePort } from '../support/processes.js';
import { until } from '../support/until.js';
import { callService, checkScreen, CHROMIUM, launchBrowser, prepareBrowserTests, startWebService, type Browser, type Page, type WebService } from './browser.js';

const ROOT = { email: 'root@example.test', password: 'a long admin password' };
const PASSWORD = 'person password 123';
const JOURNEY_MS = 180_000;
const POLL = { timeout: 15_000 };

let model: FakeModelServer;
let mcp: TestMcpServer;
let deviceProvider: TestDeviceProvider;
let service: WebService;
let browser: Browser;
let rootToken: string;

const call = <T = Record<string, any>>(route: string, token: string | undefined, body?: unknown, method?: string): Promise<T> =>
  callService<T>(service.url, route, token, body, method);

const signInApi = (email: string, password = PASSWORD) => call<{ token: string; profile: Record<string, any> }>('/api/auth/signin', undefined, { email, password });

async function person(email: string, fields: Record<string, unknown> = {}): Promise<string> {
  await call('/api/admin/user', rootToken, { email, password: PASSWORD, fname: email.split('@')[0], ...fields });
  return (await signInApi(email)).token;
}

/** One turn over SSE, read to its end. */
async function askApi(token: string, question: string, assistantId?: string): Promise<string> {
  const response = await fetch(`${service.url}/api/ai/personal-stream/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ inputs: [question], requestArgs: assistantId ? { assistant_id: assistantId } : {} }),
  });
  return response.text();
}

beforeAll(async () => {
  await prepareBrowserTests();
  model = await startFakeModelServer();
  model.setDefault({ chunks: ['An answer.'] });
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'calendar-secret' });
  deviceProvider = await startDeviceProvider();
  const port = await freePort();
  service = await startWebService({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ADMIN_EMAIL: ROOT.email,
    ADMIN_PASSWORD: ROOT.password,
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'sk-test',
    STARTING_CREDITS: '1000',
    CONNECTOR_ALLOWED_HOSTS: '127.0.0.1',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    SUBSCRIPTION_ISSUER: deviceProvider.issuer,
    SUBSCRIPTION_CLIENT_ID: DEVICE_CLIENT_ID,
    SUBSCRIPTION_API_BASE: model.url,
  });
  rootToken = (await signInApi(ROOT.email, ROOT.password)).token;
  browser = await launchBrowser(CHROMIUM);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await model?.close();
  await mcp?.close();
  await deviceProvider?.close();
});

async function signedIn(email: string, password = PASSWORD): Promise<Page> {
  const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await page.goto('/signin');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
  return page;
}

const consoleNav = (page: Page) => page.getByRole('navigation', { name: 'Administration' });
const navLabels = async (page: Page) => ((await consoleNav(page).count()) ? consoleNav(page).getByRole('link').allInnerTexts() : []);

describe('who sees what', () => {
  it('shows a super admin every family, a twin admin all but accounts, a plain user none, and loads no chat code', async () => {
    await person('tina@example.test', { role: 'admin' });
    await person('pat@example.test');
    const expected = {
      [ROOT.email]: FAMILIES.map((family) => family.label),
      'tina@example.test': FAMILIES.filter((family) => family.key !== 'accounts').map((family) => family.label),
    };
    for (const [email, labels] of Object.entries(expected)) {
      const signedInPage = await signedIn(email, email === ROOT.email ? ROOT.password : PASSWORD);
      // A fresh tab of the same session opens the console directly: what it loads is the console's alone.
      const page = await signedInPage.context().newPage();
      const scripts: string[] = [];
      page.on('request', (request) => scripts.push(request.url()));
      await page.goto('/admin');
      await consoleNav(page).waitFor();
      expect(await navLabels(page), email).toEqual(labels);
      await page.getByRole('heading', { level: 1 }).waitFor();
      // The console's own bundle: none of the chat's code, no chat socket.
      expect(scripts.filter((url) => /chat-area|socket\.io/.test(url)), email).toEqual([]);
      await page.context().close();
    }

    const plain = await signedIn('pat@example.test');
    await plain.getByLabel('Your question').waitFor();
    expect(await plain.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await plain.goto('/admin');
    await plain.getByText('Your account has no administration rights in this twin.').waitFor();
    expect(await navLabels(plain)).toEqual([]);
    await checkScreen(plain, 'console-no-rights');
    await plain.context().close();
  }, JOURNEY_MS);
});

describe("a twin admin's journey", () => {
  it('creates a person, imports a CSV, bulk-deactivates, reads segments, adds an MCP server, turns a tool off, adds a question, reads the usage chart', async () => {
    // Someone already a member of another twin, and a person of this twin with an answer from a file.
    const other = await call<{ data: { _id: string } }>('/api/admin/institution', rootToken, { name: 'Other twin' });
    await call('/api/admin/user', rootToken, { email: 'eve@example.test', password: PASSWORD, fname: 'Eve', institution: other.data._id });
    const dan = await person('dan@example.test');
    const helper = await call<{ data: { _id: string } }>('/api/user/assistant', dan, { name: 'Files helper', ragEnabled: true, institution: '' });
    const form = new FormData();
    form.append('file', new Blob(['Project Nightjar notes.\n\nThe launch code of project Nightjar is PLUM-42.\n'], { type: 'text/plain' }), 'nightjar.txt');
    const upload = await fetch(`${service.url}/api/user/files`, { method: 'POST', headers: { 'x-access-token': dan }, body: form });
    const uploadId = ((await upload.json()) as { uploadId: string }).uploadId;
    await until(async () => (await call<{ data: { status: string } }>(`/api/user/files/${uploadId}`, dan)).data.status === 'ready', 30_000);
    await askApi(dan, 'What is the launch code of project Nightjar?', helper.data._id);

    await person('tom@example.test', { role: 'admin' });
    const page = await signedIn('tom@example.test');
    await page.goto('/admin/people');
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();

    // A person added through the form; a bad email is refused at its field first.
    await page.getByText('Add a person').click();
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByRole('button', { name: 'Add person' }).click();
    await expect.poll(() => page.locator('.field-error').first().innerText(), POLL).toMatch(/email/i);
    await page.getByLabel('Email').fill('uma@example.test');
    await page.getByLabel('First name').fill('Uma');
    await page.getByRole('button', { name: 'Add person' }).click();
    await page.getByText('uma@example.test is in this twin.').waitFor(POLL);
    await checkScreen(page, 'console-people');

    // A CSV of three rows, previewed, then imported: Eve (of another twin) is added, her names not applied.
    await page.getByText('Import people from a CSV file').click();
    await page.getByLabel('CSV file').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`email,fname,lname\nvic@example.test,Vic,One\nwes@example.test,Wes,Two\neve@example.test,Evelyn,Three\n`),
    });
    const preview = page.getByRole('region', { name: 'Import preview' });
    await preview.waitFor();
    expect(await preview.getByRole('row').count()).toBe(4);
    await checkScreen(page, 'console-import-preview');
    await preview.getByRole('button', { name: 'Import 3 people' }).click();
    const result = page.getByRole('region', { name: 'Import result' });
    await expect.poll(() => result.innerText(), POLL).toContain('2 created, 1 added');
    expect(await result.innerText()).toMatch(/eve@example\.test: added; not applied: fname, lname/);

    // Two deactivated at once; the list says how many changed.
    await page.getByLabel('Search people').fill('example.test');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByLabel('Select vic@example.test').check();
    await page.getByLabel('Select wes@example.test').check();
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await page.getByText('Deactivate: 2 changed.').waitFor(POLL);
    const vic = await call<{ data: Array<{ email: string; status: string }> }>('/api/admin/users?search=vic@', rootToken);
    expect(vic.data[0].status).toBe('inactive');

    // A history's retrieval segments.
    await consoleNav(page).getByRole('link', { name: 'Histories' }).click();
    await page.getByRole('button', { name: /segments of “What is the launch code/ }).click();
    await expect.poll(() => page.locator('.segments').innerText(), POLL).toContain('PLUM-42');
    await checkScreen(page, 'console-histories');

    // An MCP server whose credential is never shown again.
    await consoleNav(page).getByRole('link', { name: 'MCP servers' }).click();
    await page.getByText('Add an MCP server').click();
    await page.getByLabel('Name', { exact: true }).fill('Calendar');
    await page.getByLabel('URL').fill(mcp.url);
    await page.getByLabel('Credential').fill('calendar-secret');
    await page.getByRole('button', { name: 'Add server' }).click();
    await page.getByText(/Added Calendar \(credential stored/).waitFor(POLL);
    await expect.poll(() => page.getByRole('row', { name: /Calendar/ }).innerText(), POLL).toContain('Set (hidden)');
    expect(await page.content()).not.toContain('calendar-secret');
    await checkScreen(page, 'console-mcp-servers');

    // A tool turned off for the twin.
    await consoleNav(page).getByRole('link', { name: 'Tools' }).click();
    const echo = page.getByRole('switch', { name: 'Calendar: echo' });
    await echo.waitFor(POLL);
    await echo.uncheck();
    const echoEnabled = async () => (await call<{ data: Array<{ tool: string; enabled: boolean }> }>('/api/admin/tools', rootToken)).data.find((tool) => tool.tool === 'echo')?.enabled;
    await expect.poll(echoEnabled, POLL).toBe(false);
    await page.reload();
    await expect.poll(() => echo.isChecked(), POLL).toBe(false);
    await checkScreen(page, 'console-tools');

    // A suggested question, then seen on the chat's start screen.
    await consoleNav(page).getByRole('link', { name: 'Questions' }).click();
    await page.getByLabel('New question').fill('What is project Nightjar?');
    await page.getByRole('button', { name: 'Add question' }).click();
    await page.getByText('Added “What is project Nightjar?”.').waitFor(POLL);
    await page.getByRole('button', { name: 'Later “What is project Nightjar?”' }).click();
    await expect.poll(() => page.getByRole('row', { name: /What is project Nightjar\?/ }).getByRole('cell').nth(2).innerText(), POLL).toBe('1');
    // Its words edited: an empty text is refused at the field, then saved.
    await page.getByRole('button', { name: 'Edit “What is project Nightjar?”' }).click();
    const editQuestion = page.getByRole('region', { name: 'Edit “What is project Nightjar?”' });
    await editQuestion.getByLabel('Question').fill('');
    await editQuestion.getByRole('button', { name: 'Save question' }).click();
    await expect.poll(() => editQuestion.locator('.field-error').innerText(), POLL).toMatch(/empty/);
    await editQuestion.getByLabel('Question').fill('What is project Nightjar about?');
    await editQuestion.getByRole('button', { name: 'Save question' }).click();
    await editQuestion.getByText('Saved.').waitFor(POLL);
    await expect.poll(() => page.getByRole('row', { name: /What is project Nightjar about\?/ }).count(), POLL).toBe(1);
    await checkScreen(page, 'console-questions');
    const chat = await signedIn('dan@example.test');
    await chat.getByRole('list', { name: 'Suggested questions' }).getByRole('button', { name: 'What is project Nightjar about?' }).waitFor(POLL);
    await chat.context().close();

    // The usage chart after three turns.
    for (const question of ['one', 'two', 'three']) await askApi(dan, question);
    const usage = await call<{ days: Array<{ turns: number }> }>('/api/admin/histories/charts/usage', (await signInApi('tom@example.test')).token, {});
    const turns = usage.days.reduce((sum, day) => sum + day.turns, 0);
    expect(turns).toBeGreaterThanOrEqual(4);
    await consoleNav(page).getByRole('link', { name: 'Charts' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Usage' }).innerText(), POLL).toContain(`${turns} turns`);
    expect(await page.getByRole('img', { name: new RegExp(`^Turns per day: Turns ${turns} in all`) }).count()).toBe(1);
    await checkScreen(page, 'console-charts');

    // A deployment-wide AI model is the super admins': listed, neither selectable nor editable here.
    await call('/api/admin/ai-model', rootToken, { name: 'Shared model', model: 'shared-1', institution: null });
    await consoleNav(page).getByRole('link', { name: 'AI models' }).click();
    await page.getByRole('row', { name: /Shared model/ }).waitFor(POLL);
    expect(await page.getByLabel('Select Shared model').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Edit Shared model' }).count()).toBe(0);
    await page.context().close();
  }, JOURNEY_MS);
});

describe("a super admin's forms", () => {
  it('adds an account and a twin, and edits a person with the refusal shown at its field', async () => {
    await person('zoe@example.test');
    const page = await signedIn(ROOT.email, ROOT.password);
    await page.goto('/admin/accounts');
    await page.getByText('Add an account').click();
    await page.getByLabel('Contact email').fill('not an email');
    await page.getByLabel('Account name').fill('Northwind');
    await page.getByRole('button', { name: 'Add account' }).click();
    await expect.poll(() => page.locator('.field-error').first().innerText(), POLL).toMatch(/email/i);
    await page.getByLabel('Contact email').fill('ops@northwind.test');
    await page.getByRole('button', { name: 'Add account' }).click();
    await page.getByText(/^Added Northwind\./).waitFor(POLL);
    await expect.poll(() => page.getByRole('row', { name: /Northwind/ }).count(), POLL).toBe(1);
    await page.getByRole('button', { name: 'Edit Northwind' }).click();
    const editAccount = page.getByRole('region', { name: 'Edit Northwind' });
    await editAccount.getByLabel('Account name').fill('Northwind Ltd');
    await editAccount.getByRole('button', { name: 'Save' }).click();
    await editAccount.getByText('Saved.').waitFor(POLL);
    await expect.poll(() => page.getByRole('row', { name: /Northwind Ltd/ }).count(), POLL).toBe(1);

    await page.goto('/admin/twins');
    await page.getByText('Create a twin').click();
    await page.getByLabel('Twin name').fill('Console Twin');
    await page.getByRole('button', { name: 'Create twin' }).click();
    await page.getByText('Created Console Twin.').waitFor(POLL);
    await expect.poll(() => page.getByRole('row', { name: /Console Twin/ }).count(), POLL).toBe(1);

    await page.goto('/admin/people');
    await page.getByRole('button', { name: 'Edit zoe@example.test' }).click();
    await page.getByLabel('Credits', { exact: true }).fill('-5');
    await page.getByRole('button', { name: 'Save person' }).click();
    await expect.poll(() => page.locator('.field-error').first().innerText(), POLL).not.toBe('');
    await page.getByLabel('Credits', { exact: true }).fill('42');
    await page.getByLabel('Given name').fill('Zoey');
    await page.getByRole('button', { name: 'Save person' }).click();
    await page.getByText(/^Saved\./).waitFor(POLL);
    const zoe = await call<{ data: Array<{ fname: string; credits: number }> }>('/api/admin/users?search=zoe@', rootToken);
    expect(zoe.data[0]).toMatchObject({ fname: 'Zoey', credits: 42 });
    // Her membership: made an administrator of the twin.
    await page.getByLabel('Role in Default Twin').selectOption('admin');
    await page.getByText('Role in Default Twin: admin.').waitFor(POLL);
    const after = await call<{ data: Array<{ memberships: Array<{ role: string }> }> }>('/api/admin/users?search=zoe@', rootToken);
    expect(after.data[0].memberships[0].role).toBe('admin');
    await checkScreen(page, 'console-people-edit');

    // A member's single grant: Yan, a plain member, is granted the charts and then sees exactly that family.
    await person('yan@example.test');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByLabel('Search people').fill('yan@');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Edit yan@example.test' }).click();
    await page.getByText('0 granted in Default Twin').click();
    await page.getByRole('group', { name: 'Grants in Default Twin' }).getByLabel('charts.view').check();
    await page.getByText('charts.view granted in Default Twin.').waitFor(POLL);
    const yan = await call<{ data: Array<{ memberships: Array<{ permissions: string[] }> }> }>('/api/admin/users?search=yan@', rootToken);
    expect(yan.data[0].memberships[0].permissions).toEqual(['charts.view']);
    const granted = await signedIn('yan@example.test');
    await granted.goto('/admin');
    await consoleNav(granted).waitFor();
    expect(await navLabels(granted)).toEqual(['Charts']);
    await granted.context().close();

    // Free credits to the twin, then in its ledger.
    await page.goto('/admin/credits');
    await page.getByText('Award free credits to this twin').click();
    await page.getByLabel('Credits', { exact: true }).fill('25');
    await page.getByRole('button', { name: 'Award credits' }).click();
    await page.getByText('Awarded 25 credits.').waitFor(POLL);
    await expect.poll(() => page.getByRole('region', { name: 'Credits ledger' }).innerText(), POLL).toContain('25');
    await page.context().close();
  }, JOURNEY_MS);

  it('edits an AI model and an SSO provider without ever showing their secrets, and creates and edits an entitlement', async () => {
    const page = await signedIn(ROOT.email, ROOT.password);
    await page.goto('/admin/ai-models');
    await page.getByText('Add an AI model').click();
    await page.getByLabel('Name people pick').fill('House model');
    await page.getByLabel("Provider's model id").fill('house-1');
    await page.getByLabel('Endpoint URL (empty: the deployment’s)').fill(model.url);
    await page.getByLabel('API key').fill('sk-house-secret');
    await page.getByRole('button', { name: 'Add model' }).click();
    await page.getByText('Added House model.').waitFor(POLL);
    await page.getByRole('button', { name: 'Edit House model' }).click();
    const editModel = page.getByRole('region', { name: 'Edit House model' });
    expect(await editModel.getByLabel('API key').inputValue()).toBe('');
    await editModel.getByLabel('Endpoint URL (empty: the deployment’s)').fill('not a url');
    await editModel.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => editModel.locator('.field-error').innerText(), POLL).not.toBe('');
    expect(await editModel.getByLabel('Endpoint URL (empty: the deployment’s)').getAttribute('aria-invalid')).toBe('true');
    await editModel.getByLabel('Endpoint URL (empty: the deployment’s)').fill(model.url);
    await editModel.getByLabel('Max tokens').fill('900');
    await editModel.getByRole('button', { name: 'Save' }).click();
    await editModel.getByText('Saved.').waitFor(POLL);
    const models = await call<{ data: Array<{ name: string; maxTokens: number; apiKeySet: boolean }> }>('/api/admin/ai-models?search=House', rootToken);
    expect(models.data[0]).toMatchObject({ maxTokens: 900, apiKeySet: true });
    await expect.poll(() => page.getByRole('row', { name: /House model/ }).innerText(), POLL).toContain('Set (hidden)');
    expect(await page.content()).not.toContain('sk-house-secret');
    await checkScreen(page, 'console-ai-models-edit');

    await page.goto('/admin/sso-providers');
    await page.getByText('Add an SSO provider').click();
    await page.getByLabel('Name on the sign-in page').fill('Staff login');
    await page.getByLabel('Issuer URL').fill(deviceProvider.issuer);
    await page.getByLabel('Client id').fill('console-client');
    await page.getByLabel('Client secret').fill('sso-secret-value');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByText('Added Staff login.').waitFor(POLL);
    await page.getByRole('button', { name: 'Edit Staff login' }).click();
    const editSso = page.getByRole('region', { name: 'Edit Staff login' });
    expect(await editSso.getByLabel('Client secret').inputValue()).toBe('');
    await editSso.getByLabel('Name on the sign-in page').fill('Staff sign-in');
    await editSso.getByRole('button', { name: 'Save' }).click();
    await editSso.getByText('Saved.').waitFor(POLL);
    await expect.poll(() => page.getByRole('row', { name: /Staff sign-in/ }).innerText(), POLL).toContain('Set (hidden)');
    expect(await page.content()).not.toContain('sso-secret-value');

    await page.goto('/admin/entitlements');
    await page.getByText('Add an entitlement').click();
    await page.getByLabel('Entitlement name').fill('Pilot');
    await page.getByLabel('Turns a day per person (empty: no limit)').fill('-1');
    await page.getByRole('button', { name: 'Add entitlement' }).click();
    await expect.poll(() => page.locator('.field-error').first().innerText(), POLL).not.toBe('');
    expect(await page.getByLabel('Turns a day per person (empty: no limit)').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Turns a day per person (empty: no limit)').fill('20');
    await page.getByRole('button', { name: 'Add entitlement' }).click();
    await page.getByText('Added Pilot.').waitFor(POLL);
    await page.getByRole('button', { name: 'Edit Pilot' }).click();
    const editEntitlement = page.getByRole('region', { name: 'Edit Pilot' });
    expect(await editEntitlement.getByLabel('Turns a day per person (empty: no limit)').inputValue()).toBe('20');
    await editEntitlement.getByLabel('Status').selectOption('inactive');
    await editEntitlement.getByLabel('Turns a day per person (empty: no limit)').fill('');
    await editEntitlement.getByLabel('Files (empty: no limit)').fill('3');
    await editEntitlement.getByRole('button', { name: 'Save' }).click();
    await editEntitlement.getByText('Saved.').waitFor(POLL);
    const pilot = await call<{ data: Array<{ name: string; status: string; institution: string | null; caps: Record<string, number | null> }> }>('/api/admin/entitlements', rootToken);
    expect(pilot.data.find((row) => row.name === 'Pilot')).toMatchObject({ status: 'inactive', caps: { userDailyTurns: null, maxFiles: 3 } });
    expect(pilot.data.find((row) => row.name === 'Pilot')?.institution).toBeTruthy();
    await checkScreen(page, 'console-entitlements-edit');

    // The charts of one twin of the scope.
    await page.goto('/admin/charts');
    const usage = page.getByRole('region', { name: 'Usage' });
    await expect.poll(() => usage.innerText(), POLL).toContain('(every twin you administer)');
    await page.getByLabel('Twin').selectOption({ label: 'Other twin' });
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => usage.innerText(), POLL).toContain('0 turns, 0 tokens, 0 credits');
    expect(await usage.innerText()).toContain('(Other twin)');
    await page.context().close();
  }, JOURNEY_MS);
});

describe('the subscription connection', () => {
  it('shows the device code with its countdown, connects once approved at the provider, and disconnects', async () => {
    const page = await signedIn(ROOT.email, ROOT.password);
    await page.goto('/admin/subscription');
    const card = page.getByRole('region', { name: 'Subscription connection' });
    await card.getByText('No subscription is connected.').waitFor(POLL);
    await card.getByRole('button', { name: 'Connect a subscription' }).click();
    const code = card.getByLabel('Code to enter');
    await expect.poll(() => code.innerText(), POLL).toMatch(/\S{4,}/);
    await expect.poll(() => card.innerText(), POLL).toMatch(/The code works for \d+:\d\d more\./);
    await checkScreen(page, 'console-subscription-code');
    const link = await card.getByRole('link').getAttribute('href');
    await deviceProvider.approve(link!, 'subscriber-1');
    await card.getByText(/A subscription is connected/).waitFor({ timeout: 30_000 });
    await card.getByRole('button', { name: 'Disconnect' }).click();
    await card.getByText('No subscription is connected.').waitFor(POLL);
    await page.context().close();
  }, JOURNEY_MS);
});

describe('every console screen', () => {
  it('has no serious axe violation in light and dark mode (super admin)', async () => {
    const page = await signedIn(ROOT.email, ROOT.password);
    await page.goto('/admin');
    // From screen to screen as a person goes, by the console's own links (opening a screen by its address
    // is what the journeys above do): a reload of the console for each screen doubled its time.
    for (const family of FAMILIES) {
      await consoleNav(page).getByRole('link', { name: family.label, exact: true }).click();
      await page.waitForURL(`**/admin/${family.path}`);
      await page.getByRole('heading', { name: family.key === 'credits' ? 'Credits' : family.label, level: 1 }).waitFor(POLL);
      await page.waitForLoadState('networkidle');
      await checkScreen(page, `console-${family.path}`);
    }
    await page.context().close();
  }, 300_000);
});
