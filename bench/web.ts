// bench/web: the web client as a person meets it, on localhost in Debian's Chromium (CHROMIUM_PATH,
// default /usr/bin/chromium), against the service started as a deployment runs it
// (bench/support/service-process.ts) with the bench's fake model (40 pieces 25 ms apart):
//   - first load: JavaScript shipped (raw and gzip, every script the page loads before the chat is
//     usable) and the time from navigation to an interactive chat screen (the question box enabled),
//     a signed-in person, a cold cache, median of BENCH_ROUNDS (5);
//   - send → first character: from pressing Enter in the page to the first character of the answer in
//     the page, next to the same turn read by a bare SSE client (request → first text piece) in the
//     same run, alternating, median of BENCH_TURNS (10) each.
//   - the console's first load: JavaScript shipped to a super admin opening /admin/people until the list
//     shows people (none of the chat's code may load; the chat's first load must load none of the console's);
//   - the people list through the API: BENCH_LIST_PEOPLE (10,000) accounts imported as an operator
//     imports them (CSV, 1,000 rows a call), then GET /api/admin/users paged (pages across the whole list)
//     and searched (an email, a name, a fragment matching many), BENCH_LIST_CALLS (300) each, one at a
//     time, as the super admin and as the twin's administrator; p50 and p99.
// Targets: first-load JavaScript ≤ 250 KB gzip (chat and console each); first character ≤ 50 ms after
// the bare client sees it; the people list paged and searched ≤ 100 ms at p99.
//   npm run bench:web
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ensureBuilt } from '../web/scripts/ensure-built.mjs';
import { createPeople, signIn } from './support/people.js';
import { ADMIN, startService } from './support/service-process.js';
import { viaSse } from './support/stream-clients.js';

type Playwright = typeof import('../web/node_modules/playwright-core/index.js');
const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, '../web/package.json'))('playwright-core') as Playwright;

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const TURNS = Math.max(1, Number(process.env.BENCH_TURNS ?? 10));
const LIST_PEOPLE = Math.max(1, Number(process.env.BENCH_LIST_PEOPLE ?? 10_000));
const LIST_CALLS = Math.max(1, Number(process.env.BENCH_LIST_CALLS ?? 300));
const TARGET = { gzipKb: 250, firstCharAfterBareMs: 50, listP99Ms: 100 };
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)];
type Browser = Awaited<ReturnType<Playwright['chromium']['launch']>>;
type BrowserPage = Awaited<ReturnType<Browser['newPage']>>;

/** Every script a cold page loads until `ready` resolves: their URLs and sizes, and the time taken. */
async function firstLoad(browser: Browser, base: string, token: string, route: string, ready: (page: BrowserPage) => Promise<unknown>) {
  const context = await browser.newContext({ baseURL: base });
  await context.addInitScript((value) => localStorage.setItem('dt.token', value), token);
  const page = await context.newPage();
  const scripts: Array<Promise<{ url: string; body: Buffer }>> = [];
  page.on('response', (response) => {
    if (response.request().resourceType() === 'script') scripts.push(response.body().then((body) => ({ url: response.url(), body })));
  });
  const started = performance.now();
  await page.goto(route);
  await ready(page).catch(async (error: unknown) => {
    console.error(`${route} did not become ready; the page shows: ${(await page.locator('body').innerText()).slice(0, 300)}`);
    throw error;
  });
  const ms = performance.now() - started;
  const loaded = await Promise.all(scripts);
  await context.close();
  return {
    ms,
    urls: loaded.map((script) => script.url),
    raw: loaded.reduce((sum, script) => sum + script.body.length, 0),
    gzip: loaded.reduce((sum, script) => sum + gzipSync(script.body, { level: 9 }).length, 0),
  };
}

async function getJson(base: string, route: string, token: string): Promise<{ ms: number; body: { total: number; data: unknown[] } }> {
  const started = performance.now();
  const response = await fetch(`${base}${route}`, { headers: { 'x-access-token': token } });
  const body = (await response.json()) as { total: number; data: unknown[] };
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`GET ${route} answered ${response.status}: ${JSON.stringify(body)}`);
  return { ms, body };
}

/** LIST_PEOPLE accounts in the Default Twin, imported as CSV 1,000 rows a call (no passwords: none hashed). */
async function importPeople(base: string, token: string): Promise<void> {
  const surnames = ['Lovelace', 'Hopper', 'Turing', 'Noether', 'Curie', 'Shannon', 'Hamilton', 'Ritchie', 'Liskov', 'Knuth'];
  for (let start = 0; start < LIST_PEOPLE; start += 1000) {
    const rows = ['email,fname,lname'];
    for (let i = start; i < Math.min(LIST_PEOPLE, start + 1000); i++) rows.push(`listed-${String(i).padStart(5, '0')}@list.example.test,Given${i},${surnames[i % surnames.length]}`);
    const response = await fetch(`${base}/api/admin/users/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': token },
      body: JSON.stringify({ csv: rows.join('\n') }),
    });
    const answer = (await response.json()) as { created?: number };
    if (!response.ok || answer.created !== rows.length - 1) throw new Error(`the import answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  }
}

/** The people list paged across its length and searched, one call at a time: the times of each. */
async function listTimes(base: string, token: string, total: number): Promise<{ paged: number[]; searched: number[] }> {
  const limit = 20;
  const pages = Math.ceil(total / limit);
  const searches = ['listed-04321@list.example.test', 'Given777', 'hopper', 'listed-09', '@list.example'];
  const paged: number[] = [];
  const searched: number[] = [];
  for (let call = 0; call < LIST_CALLS; call++) {
    const page = 1 + ((call * 97) % pages);
    paged.push((await getJson(base, `/api/admin/users?page=${page}&limit=${limit}`, token)).ms);
    const search = searches[call % searches.length];
    searched.push((await getJson(base, `/api/admin/users?page=${1 + (call % 3)}&limit=${limit}&search=${encodeURIComponent(search)}`, token)).ms);
  }
  return { paged, searched };
}

function startModel(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(path.join(here, 'servers', 'fake-model.ts'), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CHUNKS: '40', BENCH_GAP_MS: '25' },
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ child, url: message.url }));
    child.once('exit', (code) => reject(new Error(`fake-model exited with ${code}`)));
  });
}

const began = performance.now();
const progress = (step: string) => process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${step}\n`);

async function main(): Promise<void> {
  ensureBuilt();
  const model = await startModel();
  const service = await startService({ modelUrl: model.url });
  progress('service started');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const [person] = await createPeople(service.url, 1);
    progress('person signed in; first loads');

    const loads: number[] = [];
    let raw = 0;
    let gzip = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const context = await browser.newContext({ baseURL: service.url });
      await context.addInitScript((token) => localStorage.setItem('dt.token', token), person.token);
      const page = await context.newPage();
      const scripts: Array<Promise<Buffer>> = [];
      page.on('response', (response) => {
        if (response.request().resourceType() === 'script') scripts.push(response.body());
      });
      const started = performance.now();
      await page.goto('/');
      await page.getByLabel('Your question').waitFor({ state: 'visible' }).catch(async (error: unknown) => {
        console.error(`the chat screen did not appear; the page shows: ${(await page.locator('body').innerText()).slice(0, 300)}`);
        throw error;
      });
      loads.push(performance.now() - started);
      const bodies = await Promise.all(scripts);
      raw = bodies.reduce((sum, body) => sum + body.length, 0);
      gzip = bodies.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0);
      await context.close();
    }

    progress('turns');
    const context = await browser.newContext({ baseURL: service.url });
    await context.addInitScript((token) => localStorage.setItem('dt.token', token), person.token);
    const page = await context.newPage();
    await page.goto('/');
    const box = page.getByLabel('Your question');
    await box.waitFor();
    const inPage: number[] = [];
    const bare: number[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      bare.push((await viaSse(service.url, person.token)).first);
      await box.fill(`Question ${turn}`);
      // Armed in the page first: the time from the Enter key to the first character of the new answer.
      await page.evaluate((count) => {
        const armed = window as unknown as { firstCharacter?: Promise<number> };
        armed.firstCharacter = new Promise<number>((resolve) => {
          let sentAt = 0;
          document.getElementById('question')!.addEventListener('keydown', () => (sentAt = performance.now()), { once: true, capture: true });
          const observer = new MutationObserver(() => {
            const answers = document.querySelectorAll('.message-answer .markdown');
            if (sentAt > 0 && answers.length > count && (answers[answers.length - 1].textContent ?? '').length > 0) {
              observer.disconnect();
              resolve(performance.now() - sentAt);
            }
          });
          observer.observe(document.body, { subtree: true, childList: true, characterData: true });
        });
      }, await page.locator('.message-answer .markdown').count());
      await box.press('Enter');
      inPage.push(await page.evaluate(() => (window as unknown as { firstCharacter: Promise<number> }).firstCharacter));
      await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 30_000 });
    }
    await context.close();

    progress('console first loads');
    const admin = await signIn(service.url, ADMIN.email, ADMIN.password);
    const consoleLoads: Array<Awaited<ReturnType<typeof firstLoad>>> = [];
    for (let round = 0; round < ROUNDS; round++)
      consoleLoads.push(await firstLoad(browser, service.url, admin, '/admin/people', (page) => page.getByRole('row', { name: new RegExp(person.email) }).waitFor()));
    const chatLoad = await firstLoad(browser, service.url, person.token, '/', (page) => page.getByLabel('Your question').waitFor());
    const consoleLoad = consoleLoads[consoleLoads.length - 1];
    const chatCodeOnConsole = consoleLoad.urls.filter((url) => /chat-area|socket\.io/.test(url));
    const consoleCodeOnChat = chatLoad.urls.filter((url) => /AdminConsole|People-/.test(url));

    progress(`importing ${LIST_PEOPLE} people`);
    const twinAdminEmail = 'list-admin@example.test';
    await fetch(`${service.url}/api/admin/user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': admin },
      body: JSON.stringify({ email: twinAdminEmail, password: 'list-admin-password', role: 'admin' }),
    });
    const twinAdmin = await signIn(service.url, twinAdminEmail, 'list-admin-password');
    await importPeople(service.url, admin);
    const listed = (await getJson(service.url, '/api/admin/users?limit=1', admin)).body.total;
    progress(`people list (${listed} accounts)`);
    const asSuper = await listTimes(service.url, admin, listed);
    const asTwinAdmin = await listTimes(service.url, twinAdmin, listed);

    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    const first = median(inPage);
    const bareFirst = median(bare);
    console.log(`web client, ${service.shape}, Chromium headless on localhost`);
    console.log(`first-load JavaScript: ${kb(raw)} raw, ${kb(gzip)} gzip (target ≤ ${TARGET.gzipKb} KB) ${gzip / 1024 <= TARGET.gzipKb ? 'met' : 'MISSED'}`);
    console.log(`navigation → interactive chat: median ${median(loads).toFixed(0)} ms of ${ROUNDS} cold loads (${loads.map((ms) => ms.toFixed(0)).join(', ')})`);
    console.log(`send → first character in the page: median ${first.toFixed(1)} ms; bare SSE client: ${bareFirst.toFixed(1)} ms (${TURNS} turns each)`);
    console.log(`the page after the bare client: ${(first - bareFirst).toFixed(1)} ms (target ≤ ${TARGET.firstCharAfterBareMs} ms) ${first - bareFirst <= TARGET.firstCharAfterBareMs ? 'met' : 'MISSED'}`);
    console.log(`console first-load JavaScript (/admin/people, super admin): ${kb(consoleLoad.raw)} raw, ${kb(consoleLoad.gzip)} gzip (target ≤ ${TARGET.gzipKb} KB) ${consoleLoad.gzip / 1024 <= TARGET.gzipKb ? 'met' : 'MISSED'}`);
    console.log(`navigation → people listed: median ${median(consoleLoads.map((load) => load.ms)).toFixed(0)} ms of ${ROUNDS} cold loads`);
    console.log(`chat code loaded by the console: ${chatCodeOnConsole.length ? chatCodeOnConsole.join(', ') : 'none'}; console code loaded by the chat: ${consoleCodeOnChat.length ? consoleCodeOnChat.join(', ') : 'none'}`);
    const line = (who: string, kind: string, times: number[]) => {
      const p99 = percentile(times, 99);
      console.log(`people list of ${listed}, ${who}, ${kind}: p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${times.length} calls; target p99 ≤ ${TARGET.listP99Ms} ms) ${p99 <= TARGET.listP99Ms ? 'met' : 'MISSED'}`);
    };
    line('super admin', 'paged', asSuper.paged);
    line('super admin', 'searched', asSuper.searched);
    line("twin's administrator", 'paged', asTwinAdmin.paged);
    line("twin's administrator", 'searched', asTwinAdmin.searched);
  } finally {
    await browser.close();
    await service.stop();
    model.child.kill();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
