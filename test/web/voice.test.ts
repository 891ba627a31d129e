// A voice call in a real browser with a fake microphone: Chromium plays a WAV that espeak-ng spoke on
// this machine as its microphone (--use-fake-device-for-media-stream); the web client streams it through
// the service's relay to the fake Realtime provider on loopback, which "hears" a turn every 50 frames.
// The call shows live captions, then the approval card of a tool call counting down its 45 seconds;
// Approve runs the tool (the MCP server's count) and the answer quotes it; hang-up ends the call.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeRealtimeServer, type FakeRealtimeServer } from '../support/fake-realtime-server.js';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.js';
import { callService, checkScreen, CHROMIUM, launchBrowser, prepareBrowserTests, startWebService, type Browser, type WebService } from './browser.js';

const ADMIN = { email: 'root@example.test', password: 'a long admin password' };
const PASSWORD = 'person password 123';

let provider: FakeRealtimeServer;
let mcp: TestMcpServer;
let service: WebService;
let browser: Browser;
let workDir: string;
let echoKey: string;

beforeAll(async () => {
  await prepareBrowserTests();
  workDir = mkdtempSync(path.join(os.tmpdir(), 'dt-voice-'));
  const wav = path.join(workDir, 'speech.wav');
  const spoken = spawnSync('espeak-ng', ['-w', wav, 'Hello twin, please check my calendar.']);
  if (spoken.status !== 0) throw new Error(`espeak-ng failed: ${spoken.stderr.toString()}`);
  mcp = await startMcpServer({ transport: 'streamable-http', credential: 'voice-secret' });
  // The second turn asks for the tool: its key is known once the connector is saved, so the fake hears it late.
  const transcripts = ['hello twin'];
  provider = await startFakeRealtimeServer({ hears: { transcripts, framesPerTurn: 50 } });
  service = await startWebService({
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    REALTIME_BASE_URL: provider.url,
    REALTIME_MODEL: 'fake-realtime',
    STARTING_CREDITS: '100',
    CONNECTOR_ALLOWED_HOSTS: '127.0.0.1',
  });
  const admin = await callService(service.url, '/api/auth/signin', undefined, ADMIN);
  const twinId = admin.profile.institution._id as string;
  await callService(service.url, `/api/admin/institution/${twinId}`, admin.token, { rtEnabled: true }, 'PUT');
  await callService(service.url, '/api/admin/mcp-server', admin.token, { name: 'Calendar', url: mcp.url, credential: 'voice-secret', requireApproval: true });
  const tools = await callService<{ data: Array<{ name: string; tool: string }> }>(service.url, '/api/admin/tools', admin.token);
  echoKey = tools.data.find((tool) => tool.tool === 'echo')!.name;
  transcripts.push(`call:${echoKey}`);
  await callService(service.url, '/api/admin/user', admin.token, { email: 'caller@example.test', password: PASSWORD, fname: 'Cal' });
  browser = await launchBrowser(CHROMIUM, { extraArgs: ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await provider?.close();
  await mcp?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('a voice call in the browser', () => {
  it('shows captions, an approval card counting down, runs the tool after Approve, and hangs up', async () => {
    const context = await browser.newContext({ baseURL: service.url, viewport: { width: 1200, height: 800 } });
    await context.grantPermissions(['microphone']);
    const page = await context.newPage();
    await page.goto('/signin');
    await page.getByLabel('Email').fill('caller@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Call', exact: true }).click();

    const panel = page.getByRole('region', { name: 'Voice call' });
    await panel.getByText('You: hello twin').waitFor({ timeout: 20_000 });
    await panel.getByText('Twin: You said: hello twin').waitFor();
    const card = panel.getByRole('alertdialog', { name: 'Allow echo?' });
    await card.waitFor({ timeout: 20_000 });
    const secondsLeft = Number((await card.locator('.countdown').textContent())!.replace(' s', ''));
    expect(secondsLeft).toBeGreaterThan(30);
    expect(secondsLeft).toBeLessThanOrEqual(45);
    expect(mcp.calls('echo')).toBe(0);
    await checkScreen(page, 'voice-call-approval');
    await card.getByRole('button', { name: 'Approve' }).click();
    await panel.getByText('Twin: The tool answered: from voice').waitFor({ timeout: 10_000 });
    expect(mcp.calls('echo')).toBe(1);

    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByRole('status').filter({ hasText: 'Call ended.' }).waitFor();
    await context.close();
  }, 120_000);
});
