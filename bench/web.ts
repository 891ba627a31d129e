// bench/web: the web client as a person meets it, on localhost in Debian's Chromium (CHROMIUM_PATH,
// default /usr/bin/chromium), against the service started as a deployment runs it
// (bench/support/service-process.ts) with the bench's fake model (40 pieces 25 ms apart):
//   - first load: JavaScript shipped (raw and gzip, every script the page loads before the chat is
//     usable) and the time from navigation to an interactive chat screen (the question box enabled),
//     a signed-in person, a cold cache, median of BENCH_ROUNDS (5);
//   - send → first character: from pressing Enter in the page to the first character of the answer in
//     the page, next to the same turn read by a bare SSE client (request → first text piece) in the
//     same run, alternating, median of BENCH_TURNS (10) each.
// Targets: first-load JavaScript ≤ 250 KB gzip; first character ≤ 50 ms after the bare client sees it.
//   npm run bench:web
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ensureBuilt } from '../web/scripts/ensure-built.mjs';
import { createPeople } from './support/people.js';
import { startService } from './support/service-process.js';
import { viaSse } from './support/stream-clients.js';

type Playwright = typeof import('../web/node_modules/playwright-core/index.js');
const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(path.join(here, '../web/package.json'))('playwright-core') as Playwright;

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const TURNS = Math.max(1, Number(process.env.BENCH_TURNS ?? 10));
const TARGET = { gzipKb: 250, firstCharAfterBareMs: 50 };
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

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

    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    const first = median(inPage);
    const bareFirst = median(bare);
    console.log(`web client, ${service.shape}, Chromium headless on localhost`);
    console.log(`first-load JavaScript: ${kb(raw)} raw, ${kb(gzip)} gzip (target ≤ ${TARGET.gzipKb} KB) ${gzip / 1024 <= TARGET.gzipKb ? 'met' : 'MISSED'}`);
    console.log(`navigation → interactive chat: median ${median(loads).toFixed(0)} ms of ${ROUNDS} cold loads (${loads.map((ms) => ms.toFixed(0)).join(', ')})`);
    console.log(`send → first character in the page: median ${first.toFixed(1)} ms; bare SSE client: ${bareFirst.toFixed(1)} ms (${TURNS} turns each)`);
    console.log(`the page after the bare client: ${(first - bareFirst).toFixed(1)} ms (target ≤ ${TARGET.firstCharAfterBareMs} ms) ${first - bareFirst <= TARGET.firstCharAfterBareMs ? 'met' : 'MISSED'}`);
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
