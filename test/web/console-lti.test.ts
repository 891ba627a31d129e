// The twin's course platforms (LTI 1.3) in the console, in Chromium against the real service: a twin
// admin registers a platform (a bad URL refused at its field first), reads the tool URLs to give the
// platform, sets the twin's course context ids, edits and removes the platform; a member who may edit
// the twin but not its sign-in (no sso.edit) is not offered the section. Axe in both themes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TwinRow } from '../../src/modules/twins/twins.tables.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildTwin, buildUser, DEFAULT_PASSWORD, signIn } from '../support/factories.js';
import { freePort } from '../support/processes.js';
import { checkScreen, CHROMIUM, launchBrowser, prepareBrowserTests, type Browser, type Page } from './browser.js';

const POLL = { timeout: 15_000 };
const LMS = 'http://127.0.0.1:9';

let t: TestApp;
let browser: Browser;
let twin: TwinRow;
let base = '';
let adminEmail = '';
let adminToken = '';
let editorEmail = '';

beforeAll(async () => {
  await prepareBrowserTests();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await startTestApp({ env: { PUBLIC_URL: base, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
  await t.app.listen({ port, host: '127.0.0.1' });
  const db = t.platform.database.db;
  twin = await buildTwin(db);
  adminEmail = (await buildUser(db, { twin, role: 'admin' })).user.email;
  adminToken = await signIn(t.app, adminEmail);
  editorEmail = (await buildUser(db, { twin, grants: ['institutions.list', 'institutions.edit'] })).user.email;
  browser = await launchBrowser(CHROMIUM);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function twinsScreen(email: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await page.goto('/signin');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
  await page.goto('/admin/twins');
  await page.getByRole('heading', { name: `Settings of ${twin.name}` }).waitFor(POLL);
  return page;
}

const platforms = async () => (await t.app.inject({ url: `/api/admin/lti-platforms?institutionId=${twin.id}`, headers: { 'x-access-token': adminToken } })).json();

describe("the twin's course platforms in the console", () => {
  it('are not offered to a member who may edit the twin but not its sign-in', async () => {
    const page = await twinsScreen(editorEmail);
    await expect.poll(() => page.getByRole('button', { name: 'Save settings' }).isVisible(), POLL).toBe(true);
    expect(await page.getByRole('heading', { name: 'Course platforms (LTI 1.3)' }).count()).toBe(0);
    expect(await page.getByText('Register a course platform').count()).toBe(0);
    await page.context().close();
  }, 60_000);

  it('lets a twin admin register one (a bad URL refused at its field), read its tool URLs, edit and remove it', async () => {
    const page = await twinsScreen(adminEmail);
    const section = page.locator('section.lti-platforms');
    await section.getByText('No platform is registered yet.').waitFor(POLL);

    const create = section.locator('details', { hasText: 'Register a course platform' });
    await create.locator('summary').click();
    await create.getByLabel('Issuer (iss)').fill(`${LMS}/lms`);
    await create.getByLabel('Client id the platform gave this tool').fill('twin-tool');
    await create.getByLabel('Platform authorization URL').fill('http://lms.example.test/auth');
    await create.getByLabel('Platform public keys (JWKS) URL').fill(`${LMS}/jwks`);
    await create.getByLabel('Deployment ids (comma-separated)').fill('dep-1');
    await create.getByRole('button', { name: 'Register platform' }).click();
    const authField = create.getByLabel('Platform authorization URL');
    await expect.poll(() => authField.getAttribute('aria-invalid'), POLL).toBe('true');
    const errorId = (await authField.getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${errorId}"]`).innerText()).toBe('authLoginUrl must be an https URL (http only on loopback)');
    expect((await platforms()).total).toBe(0);

    await authField.fill(`${LMS}/auth`);
    await create.getByRole('button', { name: 'Register platform' }).click();
    await create.getByRole('status').filter({ hasText: `Registered ${LMS}/lms.` }).waitFor(POLL);
    await section.getByRole('cell', { name: `${LMS}/lms`, exact: true }).waitFor(POLL);
    await expect.poll(() => section.locator('dl.lti-tool-urls').innerText(), POLL).toContain(`${base}/api/lti/login`);
    expect(await section.locator('dl.lti-tool-urls').innerText()).toContain(`${base}/api/lti/launch`);
    expect((await platforms()).data).toMatchObject([{ issuer: `${LMS}/lms`, clientId: 'twin-tool', authLoginUrl: `${LMS}/auth`, deploymentIds: ['dep-1'] }]);

    // The courses the platform may open this twin from are the twin's own setting.
    await page.getByLabel(/^Course context ids/).fill('course-101\ncourse-102');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor(POLL);
    const saved = (await t.app.inject({ url: `/api/admin/institution/${twin.id}`, headers: { 'x-access-token': adminToken } })).json();
    expect(saved.data.ltiContextIds).toEqual(['course-101', 'course-102']);

    await checkScreen(page, 'console-lti-platforms');

    await section.getByRole('button', { name: `Edit ${LMS}/lms` }).click();
    const edit = page.getByRole('region', { name: `Edit ${LMS}/lms` });
    await edit.getByLabel('Deployment ids (comma-separated)').fill('dep-1, dep-2');
    await edit.getByRole('button', { name: 'Save platform' }).click();
    await section.getByRole('cell', { name: 'dep-1, dep-2', exact: true }).waitFor(POLL);
    expect((await platforms()).data[0].deploymentIds).toEqual(['dep-1', 'dep-2']);

    await section.getByRole('button', { name: `Remove ${LMS}/lms` }).click();
    await section.getByRole('button', { name: 'Remove platform' }).click();
    await section.getByRole('status').filter({ hasText: `Removed ${LMS}/lms.` }).waitFor(POLL);
    await section.getByText('No platform is registered yet.').waitFor(POLL);
    expect((await platforms()).total).toBe(0);
    await page.context().close();
  }, 120_000);
});
