// The browser of the web client's tests: playwright-core and axe-core are the web client's
// own dev dependencies (web/package.json), loaded from web/node_modules; Chromium is Debian's. Also the
// set-up the browser test files share: the web client built, and the service started as deployed on the
// run's shape.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { ensureBuilt } from '../../web/scripts/ensure-built.mjs';
import { openTestDatabase, seededDataDir, type TestDatabase } from '../support/database.js';
import { startProcess, stopProcess, type ServiceProcess, SERVICE_MAIN } from '../support/processes.js';
import { withSlot } from '../support/slots.js';

type Playwright = typeof import('../../web/node_modules/playwright-core/index.js');
type AxeResults = import('../../web/node_modules/axe-core/axe.js').AxeResults;
export type Browser = import('../../web/node_modules/playwright-core/index.js').Browser;
export type Page = import('../../web/node_modules/playwright-core/index.js').Page;
export type Route = import('../../web/node_modules/playwright-core/index.js').Route;

const fromWeb = createRequire(path.resolve('web/package.json'));
const { chromium } = fromWeb('playwright-core') as Playwright;
/** axe's script, read once: a page is given it once and keeps it until it navigates (runAxe). */
const AXE_SOURCE = readFileSync(fromWeb.resolve('axe-core/axe.min.js'), 'utf8');

const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
/**
 * Debian's Chromium the tests drive: its headless shell when installed (the package chromium-headless-shell,
 * the same engine without the desktop browser's processes: half the CPU of a browser test file), else the
 * browser itself; CHROMIUM_PATH chooses another.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');
/** The desktop browser itself, for what only it does as it ships (its third-party cookie phase-out blocking a frame's storage). */
export const CHROMIUM_BROWSER = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve(process.env.WEB_SCREENSHOTS_DIR ?? 'test-output/screenshots');

/**
 * What every browser test file needs before its browser: the web client built when its bundle is older
 * than its sources (by one file at a time: files run in parallel), Chromium, the screenshots folder.
 */
export async function prepareBrowserTests(): Promise<void> {
  await withSlot('web-build', () => ensureBuilt());
  requireChromium();
  mkdirSync(SCREENSHOTS, { recursive: true });
}

/** Fails a browser test file's set-up, saying what to install, when its Chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`The browser tests need Chromium at ${CHROMIUM} (apt-get install chromium-headless-shell)`);
}

export interface WebService extends ServiceProcess {
  /** The service's DATA_DIR (its outbox is dataDir/outbox), removed by close(). */
  dataDir: string;
  /** Stops the service, then drops its database and data folder. */
  close(): Promise<void>;
}

/**
 * The service as deployed (dist/main.js) on the run's shape: embedded (PGlite in a new data folder), or
 * with TEST_DATABASE_URL a database of its own on the server, Redis, and fresh secrets. `env` is the
 * file's own settings (PORT and PUBLIC_URL when the test must know its address before the start).
 * `embedded`: the embedded shape whatever the run's.
 */
export async function startWebService(env: Record<string, string>, options: { embedded?: boolean } = {}): Promise<WebService> {
  let database: TestDatabase | undefined;
  const shape: Record<string, string> = { DATABASE_URL: '', REDIS_URL: '' };
  if (process.env.TEST_DATABASE_URL && !options.embedded) {
    database = await openTestDatabase();
    Object.assign(shape, {
      DATABASE_URL: database.url!,
      REDIS_URL: process.env.TEST_REDIS_URL ?? '',
      JWT_SECRET: randomBytes(32).toString('hex'),
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
  }
  // Embedded: the service starts on a copy of the run's migrated database (no test here is of a first start).
  const dataDir = database ? mkdtempSync(path.join(os.tmpdir(), 'dt-web-')) : seededDataDir('dt-web-');
  const removeAll = async () => {
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let service: ServiceProcess;
  try {
    service = await startProcess(SERVICE_MAIN, [], { DATA_DIR: dataDir, ...shape, ...env });
  } catch (error) {
    await removeAll();
    throw error;
  }
  return {
    ...service,
    dataDir,
    async close() {
      await stopProcess(service);
      await removeAll();
    },
  };
}

/** `extraArgs`: Chromium flags a test needs beyond the defaults (a fake microphone playing a file, say). */
export function launchBrowser(executablePath: string, options: { extraArgs?: string[] } = {}): Promise<Browser> {
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
      ...(options.extraArgs ?? []),
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
    const results = await runAxe(page, theme === 'dark' ? ['color-contrast'] : undefined);
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

/**
 * What a failed browser test leaves to read: each page it still had open, photographed into
 * test-output/failures/<test>-<n>.png, and its address and visible text printed (CI keeps the log, not
 * the files).
 */
export async function recordFailure(pages: Iterable<Page>, testName: string): Promise<void> {
  const folder = path.resolve('test-output/failures');
  mkdirSync(folder, { recursive: true });
  const stem = testName.replace(/[^a-z0-9]+/gi, '-').slice(0, 80);
  let n = 0;
  for (const page of pages) {
    if (page.isClosed()) continue;
    n += 1;
    const text = await page.evaluate(() => document.body?.innerText ?? '').catch((error: unknown) => `(unreadable: ${String(error)})`);
    console.error(`[${testName}] page ${n} at ${page.url()}:\n${text.slice(0, 2_000)}`);
    await page.screenshot({ path: path.join(folder, `${stem}-${n}.png`) }).catch(() => {});
  }
}

/**
 * axe run on the page's document (every rule, or only `rules`). The web client has no frames, so axe runs
 * in the page alone, given its script once per document: @axe-core/playwright sent the 0.6 MB script to
 * every frame on every run and opened a blank page to merge the frames' results (the console's file took
 * 12% less CPU without it: docs/performance.md, "npm test").
 */
async function runAxe(page: Page, rules?: string[]): Promise<AxeResults> {
  expect(page.frames(), 'a screen checked by axe has no frames').toHaveLength(1);
  if (!(await page.evaluate(() => typeof (window as { axe?: unknown }).axe === 'object'))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(
    (only) => (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe.run(
      document,
      only ? { runOnly: { type: 'rule', values: only } } : {},
    ),
    rules ?? null,
  );
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
