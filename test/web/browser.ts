// The browser of the web client's tests: playwright-core and @axe-core/playwright are the web client's
// own dev dependencies (web/package.json), loaded from web/node_modules; Chromium is Debian's.
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'vitest';

type Playwright = typeof import('../../web/node_modules/playwright-core/index.js');
type AxeModule = typeof import('../../web/node_modules/@axe-core/playwright/dist/index.js');
export type Browser = import('../../web/node_modules/playwright-core/index.js').Browser;
export type Page = import('../../web/node_modules/playwright-core/index.js').Page;

const fromWeb = createRequire(path.resolve('web/package.json'));
const { chromium } = fromWeb('playwright-core') as Playwright;
const { AxeBuilder } = fromWeb('@axe-core/playwright') as AxeModule;

/** `extraArgs`: more Chromium switches (a fake microphone: --use-fake-device-for-media-stream and its file). */
export function launchBrowser(executablePath: string, extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/**
 * One screen, checked and photographed: axe finds no serious or critical violation in light mode, nor a
 * contrast one in dark mode, and a screenshot of each goes to the screenshots folder as <name>-light.png and
 * <name>-dark.png. The theme is switched the way the dark_mode setting switches it (data-theme on <html>).
 */
export async function checkScreen(page: Page, name: string, folder = process.env.WEB_SCREENSHOTS_DIR ?? 'test-output/screenshots'): Promise<void> {
  const before = await page.evaluate(() => document.documentElement.dataset.theme ?? null);
  for (const theme of ['light', 'dark'] as const) {
    await page.evaluate((value) => (document.documentElement.dataset.theme = value), theme);
    // Everything but colour is the same in both themes: dark mode is checked for contrast only.
    const builder = new AxeBuilder({ page });
    const results = await (theme === 'dark' ? builder.withRules(['color-contrast']) : builder).analyze();
    const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    expect(
      serious.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`),
      `${name} in ${theme} mode`,
    ).toEqual([]);
    await page.screenshot({ path: path.join(path.resolve(folder), `${name}-${theme}.png`), fullPage: false });
  }
  await page.evaluate((value) => {
    if (value === null) delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = value;
  }, before);
}

/** A JSON call to a running service as the browser tests' set-up makes it: GET without a body, POST with one; a failure throws with its answer. */
export async function callService<T = Record<string, any>>(baseUrl: string, route: string, token: string | undefined, body?: unknown, method = body === undefined ? 'GET' : 'POST'): Promise<T> {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { 'x-access-token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as T;
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}
