// The SSE writer on a listening app, read with a real HTTP client: frames, the headers plugins set
// (CORS, helmet) kept through hijack, heartbeats, safe writes after close, and client-abort detection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { readSse } from '../../../test/support/sse-client.js';
import { openSse } from './sse.js';
import { until } from '../../../test/support/until.js';

let testApp: TestApp;
let base: string;
const afterClose: Array<{ sent: boolean; closedFlag: boolean }> = [];
const aborted: Array<{ frames: number; reason: string }> = [];
let abortSeen: (() => void) | undefined;

beforeAll(async () => {
  testApp = await startTestApp({
    beforeReady: (app) => {
      app.post(
        '/api/test-only/sse',
        { config: { auth: 'none' }, schema: { body: z.object({ frames: z.array(z.record(z.string(), z.unknown())), heartbeatMs: z.number().optional(), holdMs: z.number().default(0) }) } },
        async (request, reply) => {
          const { frames, heartbeatMs, holdMs } = request.body;
          const sse = openSse<Record<string, unknown>>(request, reply, { heartbeatMs });
          for (const frame of frames) sse.send(frame);
          if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
          sse.close();
          sse.close();
          afterClose.push({ sent: sse.send({ type: 'late' }), closedFlag: sse.closed });
        },
      );
      app.get('/api/test-only/sse-hold', { config: { auth: 'none' } }, async (request, reply) => {
        const sse = openSse<Record<string, unknown>>(request, reply, { heartbeatMs: 0 });
        let sent = 0;
        sse.send({ type: 'connected', message: 'Stream established' });
        sent += 1;
        const timer = setInterval(() => {
          if (sse.send({ type: 'stream', n: sent })) sent += 1;
        }, 10);
        sse.signal.addEventListener('abort', () => {
          clearInterval(timer);
          aborted.push({ frames: sent, reason: String((sse.signal.reason as Error).name) });
          abortSeen?.();
        });
      });
      app.get('/api/test-only/sse-first', { config: { auth: 'none' } }, async (request, reply) => {
        const sse = openSse<Record<string, unknown>>(request, reply, { heartbeatMs: 0, first: { type: 'connected', message: 'with the headers' } });
        // Nothing more is written until the client leaves: the first frame must not wait for another write.
        await new Promise((resolve) => sse.signal.addEventListener('abort', resolve));
      });
      app.get('/api/test-only/sse-bearer', { config: { auth: 'bearer' } }, async (request, reply) => {
        const sse = openSse<Record<string, unknown>>(request, reply);
        sse.send({ type: 'done' });
        sse.close();
      });
    },
  });
  base = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => testApp?.close());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/test-only/sse`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

describe('openSse', () => {
  it('writes data frames as JSON, in order, and ends the response', async () => {
    const frames = [{ type: 'connected', message: 'hi' }, { type: 'stream', prompt: 'a "quoted"\nline', delta: 'x' }, { type: 'done' }];
    const response = await post({ frames });
    expect(response.status).toBe(200);
    const reader = readSse(response);
    expect(await reader.rest()).toEqual(frames);
  });

  it('sends the event-stream headers and keeps CORS and helmet headers set before the hijack', async () => {
    const response = await post({ frames: [] }, { origin: 'https://embed.example' });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('access-control-allow-origin')).toBe('https://embed.example');
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    await response.body?.cancel();
  });

  it('sends heartbeat comments while the stream is idle', async () => {
    const response = await post({ frames: [{ type: 'connected' }], heartbeatMs: 40, holdMs: 230 });
    const reader = readSse(response);
    expect(await reader.rest()).toEqual([{ type: 'connected' }]);
    expect(reader.comments.length).toBeGreaterThanOrEqual(3);
    expect(new Set(reader.comments)).toEqual(new Set([': ping']));
  });

  it('ignores writes after close', async () => {
    afterClose.length = 0;
    const response = await post({ frames: [{ type: 'done' }] });
    await readSse(response).rest();
    await until(() => afterClose.length === 1);
    expect(afterClose[0]).toEqual({ sent: false, closedFlag: true });
  });

  it('aborts the signal when the client goes away, and stops writing', async () => {
    const seen = new Promise<void>((resolve) => (abortSeen = resolve));
    const client = new AbortController();
    const response = await fetch(`${base}/api/test-only/sse-hold`, { signal: client.signal });
    const reader = readSse(response);
    expect(await reader.next()).toEqual({ type: 'connected', message: 'Stream established' });
    expect(await reader.next()).toMatchObject({ type: 'stream' });
    client.abort();
    await seen;
    const [entry] = aborted;
    expect(entry.reason).toBe('AbortError');
    const framesAtAbort = entry.frames;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(aborted[0].frames).toBe(framesAtAbort);
  });

  it('sends the first frame with the headers, before any other write', async () => {
    const client = new AbortController();
    const response = await fetch(`${base}/api/test-only/sse-first`, { signal: client.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await readSse(response).next()).toEqual({ type: 'connected', message: 'with the headers' });
    client.abort();
  });

  it('leaves authentication to the guard: a missing Bearer token is a JSON 401, not a stream', async () => {
    const refused = await fetch(`${base}/api/test-only/sse-bearer`, { headers: { 'x-access-token': 'not-bearer' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/json');
    expect(await refused.json()).toMatchObject({ success: false, message: 'Authentication Required' });
  });
});

