// An embedded twin in a real browser (Debian's Chromium): a page served on its own loopback port, one
// of the twin's authorized origins, includes /embed.js; a visitor asks in the frame and the page's
// transcript callback receives the turn as it streams. The same page served on another port (an origin
// not on the list) gets no frame (frame-ancestors) and no session (403). The service runs in this
// process on its own loopback port, on the test database, with the fake model server. Guidance from
// the page's API and from a twin:guide message, and a launch token's signIn, run in the same browser.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { history } from '../../src/modules/history/history.tables.js';
import { twins } from '../../src/modules/twins/twins.tables.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { buildTwin, buildUser, signIn } from '../support/factories.js';
import { users } from '../../src/modules/users/users.tables.js';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.js';
import { CHROMIUM, launchBrowser, requireChromium, type Browser } from './browser.js';

let t: TestApp;
let model: FakeModelServer;
let browser: Browser;
let serviceUrl: string;
const pages: Server[] = [];

async function userIdOf(email: string): Promise<string | undefined> {
  const [row] = await t.platform.database.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return row?.id;
}

/** A plain page on its own loopback port that includes the twin's embed script. */
async function startPage(publicId: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(
      '<!doctype html><html><head><title>Course page</title></head><body><h1>Course page</h1>' +
        `<script src="${serviceUrl}/embed.js" data-public-id="${publicId}"></script>` +
        '<script>window.lines = []; DigitalTwin.onTranscript(function (line) { window.lines.push(line); });</script>' +
        '</body></html>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pages.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  requireChromium();
  model = await startFakeModelServer();
  t = await startTestApp({ env: { OPENAI_BASE_URL: model.url, DEFAULT_MODEL: 'fake-chat' } });
  serviceUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchBrowser(CHROMIUM);
});
afterAll(async () => {
  await browser?.close();
  for (const server of pages) await new Promise((resolve) => server.close(resolve));
  await t?.close();
  await model?.close();
});

describe('an embedded twin in Chromium', () => {
  it("streams a visitor's turn to the page's transcript callback, on an authorized origin", async () => {
    const twin = await buildTwin(t.platform.database.db, { publicAuthorizedUrls: [], embedTranscriptEnabled: true, credits: 10 });
    const origin = await startPage(twin.publicId);
    // The page's origin is known once its server listens.
    await t.platform.database.db.update(twins).set({ publicAuthorizedUrls: [`${origin}/courses/`] }).where(eq(twins.id, twin.id));
    const context = await browser.newContext();
    const page = await context.newPage();
    const session = page.waitForResponse((response) => response.url().endsWith('/api/agent/embed/session'));
    await page.goto(`${origin}/`);
    expect((await session).status()).toBe(200);
    await page.getByRole('button', { name: 'Chat' }).click();
    const frame = page.frameLocator('iframe[title="Digital Twin chat"]');
    model.enqueue({ chunks: ['Photosynthesis ', 'turns light into sugar.'] });
    await frame.getByLabel('Your question').fill('What is photosynthesis?');
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.locator('.twin-assistant').textContent(), { timeout: 15_000 }).toBe('Photosynthesis turns light into sugar.');
    // The page hears the final line after the frame shows the answer: wait for it, not for a count of lines.
    await expect.poll(() => page.evaluate(() => (window as any).lines.some((line: any) => line.role === 'assistant' && line.final)), { timeout: 10_000 }).toBe(true);
    const lines = (await page.evaluate(() => (window as any).lines)) as Array<{ type: string; role: string; text: string; final: boolean }>;
    expect(lines[0]).toEqual({ type: 'twin:transcript', role: 'user', text: 'What is photosynthesis?', final: true });
    expect(lines.at(-1)).toEqual({ type: 'twin:transcript', role: 'assistant', text: 'Photosynthesis turns light into sugar.', final: true });
    const partial = lines.filter((line) => line.role === 'assistant' && !line.final);
    expect(partial.map((line) => line.text)).toContain('Photosynthesis ');
    await context.close();
  });

  it('gives the same page on another origin no frame (CSP) and no session (403)', async () => {
    const twin = await buildTwin(t.platform.database.db, { publicAuthorizedUrls: ['https://school.example'], embedTranscriptEnabled: true });
    const origin = await startPage(twin.publicId);
    const context = await browser.newContext();
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => refusals.push(message.text()));
    const session = page.waitForResponse((response) => response.url().endsWith('/api/agent/embed/session'));
    await page.goto(`${origin}/`);
    expect((await session).status()).toBe(403);
    await page.getByRole('button', { name: 'Chat' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('This page may not embed this Digital Twin.');
    // The browser refused to render the frame: its document is not the chat page.
    await expect.poll(() => refusals.some((text) => text.includes('frame-ancestors')), { timeout: 10_000 }).toBe(true);
    const chat = page.frames().find((frame) => frame !== page.mainFrame());
    expect(await chat?.evaluate(() => document.getElementById('twin-embed') !== null).catch(() => false)).toBe(false);
    await context.close();
  });

  it('refuses guidance while it is off, takes it when on (the API and a twin:guide message), keeps it on the record; signIn asks as the person', async () => {
    const db = t.platform.database.db;
    const twin = await buildTwin(db, { publicAuthorizedUrls: [], credits: 10 });
    const origin = await startPage(twin.publicId);
    await db.update(twins).set({ publicAuthorizedUrls: [origin] }).where(eq(twins.id, twin.id));
    const context = await browser.newContext();
    const page = await context.newPage();
    const session = page.waitForResponse((response) => response.url().endsWith('/api/agent/embed/session'));
    await page.goto(`${origin}/`);
    expect((await session).status()).toBe(200);
    const guide = (text: string) =>
      page.evaluate((value) => (window as any).DigitalTwin.guide(value).then((answer: unknown) => answer, (error: { code: string }) => ({ refused: error.code })), text);
    expect(await guide('Mention chapter 3')).toEqual({ refused: 'GUIDANCE_OFF' });

    await db.update(twins).set({ embedGuidanceEnabled: true }).where(eq(twins.id, twin.id));
    expect(await guide('Mention chapter 3')).toEqual({ success: true });
    // A page may also post twin:guide into the frame; the script sends it with the page's Origin.
    const forwarded = page.waitForResponse((response) => response.url().endsWith('/api/agent/embed/guide'));
    await page.evaluate(() => document.querySelector('iframe')!.contentWindow!.postMessage({ type: 'twin:guide', text: 'Keep it short' }, '*'));
    expect((await forwarded).status()).toBe(200);

    await page.getByRole('button', { name: 'Chat' }).click();
    const frame = page.frameLocator('iframe[title="Digital Twin chat"]');
    model.enqueue({ chunks: ['Chapter 3, briefly.'] });
    await frame.getByLabel('Your question').fill('What should I read?');
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.locator('.twin-assistant').textContent(), { timeout: 15_000 }).toBe('Chapter 3, briefly.');
    expect(model.requests.at(-1)?.system).toContain('- Mention chapter 3\n- Keep it short');
    const [record] = await db.select().from(history).where(eq(history.twinId, twin.id));
    expect(record.question).toBe('What should I read?');
    expect(record.guidance.map((entry) => entry.text)).toEqual(['Mention chapter 3', 'Keep it short']);
    // The transcript switch is off: the page heard nothing.
    expect(await page.evaluate(() => (window as any).lines)).toEqual([]);

    // The site signs its person in with a launch token its backend minted; the frame then asks as them.
    const admin = await buildUser(db, { twin, role: 'admin' });
    const minted = await t.app.inject({ method: 'POST', url: '/api/auth/sdk-sign', headers: { 'x-access-token': await signIn(t.app, admin.user.email) }, payload: { email: 'learner@example.test' } });
    expect(await page.evaluate((token) => (window as any).DigitalTwin.signIn(token), minted.json().token as string)).toEqual({ visitor: false });
    await db.update(twins).set({ poolCredits: true }).where(eq(twins.id, twin.id));
    model.enqueue({ chunks: ['Signed in.'] });
    await frame.getByLabel('Your question').fill('Who am I?');
    await frame.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => frame.locator('.twin-assistant').last().textContent(), { timeout: 15_000 }).toBe('Signed in.');
    const asked = await db.select({ userId: history.userId, question: history.question }).from(history).where(eq(history.twinId, twin.id));
    const learner = await userIdOf('learner@example.test');
    expect(learner).toEqual(expect.any(String));
    expect(asked.find((row) => row.question === 'Who am I?')?.userId).toBe(learner);
    await context.close();
  });
});
