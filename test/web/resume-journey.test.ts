// A running answer outlives its page, in a real browser against the real service (dist/main.js, embedded
// database; PostgreSQL + Redis with TEST_DATABASE_URL): a reload mid-answer shows the same answer going
// on, a second tab of the person shows it live, and Stop on the resumed answer ends it on the service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.js';
import { callService, CHROMIUM, launchBrowser, prepareBrowserTests, startWebService, type Browser, type Page, type WebService } from './browser.js';

const ADMIN = { email: 'root@example.test', password: 'a long admin password' };
const PASSWORD = 'person password 123';
const POLL = { timeout: 20_000 };

let model: FakeModelServer;
let service: WebService;
let browser: Browser;

beforeAll(async () => {
  await prepareBrowserTests();
  model = await startFakeModelServer();
  service = await startWebService({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-test', STARTING_CREDITS: '1000' });
  browser = await launchBrowser(CHROMIUM);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await model?.close();
});

const lastAnswer = (page: Page) => page.locator('.message-answer').last();

describe('a running answer in the browser', () => {
  it('goes on after a reload, shows live in a second tab, and stops from the resumed page', async () => {
    const admin = await callService<{ token: string }>(service.url, '/api/auth/signin', undefined, ADMIN);
    await callService(service.url, '/api/admin/user', admin.token, { email: 'rhea@example.test', password: PASSWORD, fname: 'Rhea' });
    const rhea = await callService<{ token: string }>(service.url, '/api/auth/signin', undefined, { email: 'rhea@example.test', password: PASSWORD });
    const words = Array.from({ length: 200 }, (_, i) => `word${i + 1} `);
    model.setDefault({ chunks: words, gapMs: 250 });

    const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    await page.goto('/signin');
    await page.getByLabel('Email').fill('rhea@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Your question').fill('Count slowly');
    await page.getByLabel('Your question').press('Enter');
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toContain('word3');

    await page.reload();
    // The same answer, continuing: its earlier words are there again, and later ones arrive.
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toContain('word1 word2 word3');
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toMatch(/word(9|[1-9]\d)/);
    expect(await page.locator('.message-question').last().innerText()).toContain('Count slowly');
    expect(await page.locator('.message-answer').count()).toBe(1);

    const second = await context.newPage();
    await second.goto(new URL(page.url()).pathname);
    await expect.poll(() => lastAnswer(second).innerText(), POLL).toContain('word1 word2');
    const seenInSecond = (await lastAnswer(second).innerText()).length;
    await expect.poll(async () => (await lastAnswer(second).innerText()).length, POLL).toBeGreaterThan(seenInSecond);

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await expect.poll(() => lastAnswer(page).innerText(), POLL).toContain('Stopped.');
    const history = async () => (await callService<{ data: Array<{ status: string; answer?: string }> }>(service.url, '/api/user/history', rhea.token)).data;
    await expect.poll(async () => (await history())[0]?.status, POLL).toBe('cancelled');
    expect((await callService<{ data: unknown[] }>(service.url, '/api/user/history?status=streaming', rhea.token)).data).toEqual([]);
    // The second tab saw the end too.
    await expect.poll(() => lastAnswer(second).getAttribute('aria-busy'), POLL).not.toBe('true');
    await context.close();
  }, 180_000);
});
