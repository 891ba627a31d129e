// Dictation in a real browser: Chromium's fake microphone plays a sentence espeak-ng spoke into a WAV,
// the page records it (MediaRecorder), the service passes the recording to a fake transcription
// endpoint on loopback, which checks it received audio, and the text fills the question box. A
// service without a transcription provider shows no microphone at all.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchBrowser, prepareBrowserTests, startWebService, type Browser, type Page, type WebService } from './browser.js';

const ADMIN = { email: 'dictation-admin@example.test', password: 'a long admin password' };
const HEARD = 'When does the library open on Sunday?';
const DICTATE = 'Dictate with the microphone';

let workDir: string;
let provider: Server;
/** What the fake endpoint received: the uploaded file's first bytes and its length. */
const received: Array<{ head: string; bytes: number }> = [];
let withProvider: WebService;
let withoutProvider: WebService;
let browser: Browser;

/** The `file` part of a multipart body. */
function filePart(body: Buffer, contentType: string): Buffer | undefined {
  const boundary = Buffer.from(`--${/boundary=(.+)$/.exec(contentType)?.[1] ?? ''}`);
  const start = body.indexOf('name="file"');
  if (start === -1) return undefined;
  const from = body.indexOf('\r\n\r\n', start) + 4;
  return body.subarray(from, body.indexOf(boundary, from) - 2);
}

/** A recording as Chromium's MediaRecorder makes one: WebM (EBML header) or Ogg. */
const isRecording = (file: Buffer) => file.readUInt32BE(0) === 0x1a45dfa3 || file.subarray(0, 4).toString('latin1') === 'OggS';

const admin = { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };

beforeAll(async () => {
  await prepareBrowserTests();
  workDir = mkdtempSync(path.join(os.tmpdir(), 'dt-dictation-'));
  const wav = path.join(workDir, 'question.wav');
  execFileSync('espeak-ng', ['-w', wav, HEARD]);
  provider = createServer((request, response) => {
    const pieces: Buffer[] = [];
    request.on('data', (piece: Buffer) => pieces.push(piece));
    request.on('end', () => {
      const file = filePart(Buffer.concat(pieces), request.headers['content-type'] ?? '');
      if (file) received.push({ head: file.subarray(0, 4).toString('hex'), bytes: file.length });
      // Audio of a second or more: a few kilobytes of compressed sound, not an empty container.
      const heard = request.url === '/v1/audio/transcriptions' && file !== undefined && file.length > 2_000 && isRecording(file);
      response.writeHead(heard ? 200 : 400, { 'content-type': 'application/json' });
      response.end(JSON.stringify(heard ? { text: HEARD } : { error: { message: 'not a recording' } }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
  [withProvider, withoutProvider] = await Promise.all([
    startWebService({ ...admin, TRANSCRIBE_BASE_URL: providerUrl, TRANSCRIBE_MODEL: 'whisper-test' }),
    startWebService(admin),
  ]);
  browser = await launchBrowser(CHROMIUM, {
    extraArgs: ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([withProvider?.close(), withoutProvider?.close()]);
  if (provider?.listening) await new Promise((resolve) => provider.close(resolve));
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** A signed-in chat page, and the status the page's transcription probe got (see web/src/chat/Dictation.tsx). */
async function signedInPage(baseURL: string): Promise<{ page: Page; probed: Promise<number> }> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1200, height: 800 } });
  await context.grantPermissions(['microphone'], { origin: baseURL });
  const page = await context.newPage();
  const probed = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/ai/transcribe').then((response) => response.status());
  await page.goto('/signin');
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Your question').waitFor();
  return { page, probed };
}

describe('dictation into the question box', () => {
  it('records the microphone, and the transcribed text fills the question box', async () => {
    const { page, probed } = await signedInPage(withProvider.url);
    expect(await probed).toBe(400); // an empty form: NO_FILE, so the service transcribes
    await page.getByRole('button', { name: DICTATE }).click();
    const stop = page.getByRole('button', { name: 'Stop dictation' });
    await stop.waitFor();
    await page.waitForTimeout(2_500);
    await stop.click();
    await expect.poll(() => page.getByLabel('Your question').inputValue(), { timeout: 15_000 }).toBe(HEARD);
    expect(received).toHaveLength(1);
    expect(received[0]!.bytes).toBeGreaterThan(2_000);
    // The person edits and sends it as any question; the microphone is offered again.
    await expect.poll(() => page.getByRole('button', { name: DICTATE }).isEnabled()).toBe(true);
    await page.context().close();
  }, 60_000);

  it('shows no microphone when the service has no transcription provider', async () => {
    const { page, probed } = await signedInPage(withoutProvider.url);
    expect(await probed).toBe(503);
    await page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await page.getByRole('button', { name: DICTATE }).count()).toBe(0);
    await page.context().close();
  }, 60_000);
});
