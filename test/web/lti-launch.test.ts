// An LTI 1.3 launch in Chromium with third-party cookies blocked: the platform's course page (its own
// site, localhost) frames the tool (127.0.0.1) and posts the login into the frame; the platform's
// authorization endpoint posts the signed id_token back; the frame, refused storage, ends on the twin's
// chat signed in with the launch session (handed over in the URL fragment), with no cookie at any step.
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMembership, updateTwin } from '../../src/modules/twins/twins.repo.js';
import { findUserByEmail } from '../../src/modules/users/users.repo.js';
import type { TwinRow } from '../../src/modules/twins/twins.tables.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildTwin, buildUser, signIn } from '../support/factories.js';
import { post } from '../support/identity.js';
import { startLtiPlatform, type TestLtiPlatform } from '../support/lti-platform.js';
import { freePort } from '../support/processes.js';
import { CHROMIUM_BROWSER, prepareBrowserTests, type Browser } from './browser.js';

const fromWeb = createRequire(path.resolve('web/package.json'));
const { chromium } = fromWeb('playwright-core') as typeof import('../../web/node_modules/playwright-core/index.js');

let t: TestApp;
let lms: TestLtiPlatform;
let browser: Browser;
let twin: TwinRow;
let base = '';

beforeAll(async () => {
  await prepareBrowserTests();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  lms = await startLtiPlatform({ clientId: 'twin-tool', deploymentId: 'dep-1', contextId: 'course-101', host: 'localhost', toolLoginUrl: `${base}/api/lti/login` });
  t = await startTestApp({ env: { PUBLIC_URL: base, OUTBOUND_ALLOWED_HOSTS: 'localhost' } });
  await t.app.listen({ port, host: '127.0.0.1' });
  const db = t.platform.database.db;
  twin = (await updateTwin(db, (await buildTwin(db)).id, { ltiContextIds: ['course-101'] }))!;
  const adminToken = await signIn(t.app, (await buildUser(db, { twin, role: 'admin' })).user.email);
  const registered = await post(
    t.app,
    '/api/admin/lti-platform',
    { issuer: lms.issuer, clientId: 'twin-tool', authLoginUrl: lms.authLoginUrl, jwksUrl: lms.jwksUrl, deploymentIds: ['dep-1'] },
    adminToken,
  );
  expect(registered.statusCode, registered.body).toBe(201);
  // Chromium as it ships where third-party cookies are phased out: a frame of another site gets none, nor
  // storage (the desktop browser: the headless shell leaves a frame its partitioned storage).
  browser = await chromium.launch({ executablePath: CHROMIUM_BROWSER, headless: true, args: ['--no-sandbox', '--disable-gpu', '--test-third-party-cookie-phaseout'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await lms?.close();
});

describe('an LTI launch in a browser blocking third-party cookies', () => {
  it("opens the twin's chat in the course page's frame, signed in, with no cookie", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const documents: Array<{ url: string; status: number }> = [];
    page.on('response', (response) => {
      if (response.request().resourceType() === 'document') documents.push({ url: response.url(), status: response.status() });
    });
    await page.goto(`${new URL(lms.issuer).origin}/course`);
    const frame = () => page.frame({ name: 'tool' });
    await expect.poll(() => frame()?.url() ?? '', { timeout: 20_000 }).toContain(`/lti/${twin.publicId}`);
    await expect.poll(() => frame()!.getByLabel('Your question').isVisible(), { timeout: 20_000 }).toBe(true);
    expect(documents.find((d) => d.url === `${base}/api/lti/launch`)?.status).toBe(200);
    expect(await context.cookies()).toEqual([]);
    // The frame may not use storage here: the token came in the fragment, which left the address bar at once.
    expect(await frame()!.evaluate(() => { try { return typeof window.localStorage; } catch { return 'denied'; } })).toBe('denied');
    expect(frame()!.url()).not.toContain('dt.token');
    const person = await findUserByEmail(t.platform.database.db, 'learner@school.example');
    expect(person?.external).toMatchObject({ lxp_partner_name: 'School LMS', lxp_role_name: 'Learner', lxp_user_type: 1 });
    expect(await findMembership(t.platform.database.db, person!.id, twin.id)).toMatchObject({ role: 'user' });
    await context.close();
  }, 60_000);
});
