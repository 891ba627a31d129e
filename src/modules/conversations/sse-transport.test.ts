// The SSE pieces composed the way the SSE Q&A route will compose them (openSse + streamAnswer +
// sseFrames), on a listening app with the fake model server: the frame sequence of a good turn, of a
// provider failure, and a closed request cancelling the model call.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { readSse } from '../../../test/support/sse-client.js';
import { createModelRegistry } from '../../ai/registry.js';
import { openSse } from '../../platform/realtime/sse.js';
import { sseFrames } from './sse-frames.js';
import { streamAnswer, type StreamAnswerResult } from './stream-turn.js';
import { until } from '../../../test/support/until.js';

let testApp: TestApp;
let model: FakeModelServer;
let base: string;
const results: StreamAnswerResult[] = [];

beforeAll(async () => {
  model = await startFakeModelServer();
  const models = createModelRegistry({ baseUrl: model.url, defaultModel: 'fake-chat' });
  testApp = await startTestApp({
    beforeReady: (app) => {
      app.post('/api/test-only/qanda-stream', { config: { auth: 'none' }, schema: { body: z.object({ question: z.string() }) } }, async (request, reply) => {
        const sse = openSse(request, reply, { heartbeatMs: 0 });
        sse.send(sseFrames.connected());
        const result = await streamAnswer({
          model: models.resolveModel(),
          messages: [{ role: 'user', content: request.body.question }],
          signal: sse.signal,
          maxRetries: 0,
          onDelta: (delta) => sse.send(sseFrames.stream(delta)),
        });
        results.push(result);
        if (result.failed) sse.send(sseFrames.error(result.failed.message));
        else if (!result.cancelled) {
          sse.send(sseFrames.complete({ usage: result.usage.inputTokens + result.usage.outputTokens, outputs: [result.text] }));
        }
        sse.send(sseFrames.done());
        sse.close();
      });
    },
  });
  base = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await testApp?.close();
  await model?.close();
});
beforeEach(() => {
  results.length = 0;
});

const ask = (signal?: AbortSignal) =>
  fetch(`${base}/api/test-only/qanda-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ question: 'Hi?' }),
    signal,
  });

describe('SSE transport of a turn', () => {
  it('sends connected, stream frames, complete with usage and outputs, then done', async () => {
    model.enqueue({ chunks: ['Hello ', 'there.'], usage: { prompt_tokens: 9, completion_tokens: 3 } });
    const frames = await readSse(await ask()).rest();
    expect(frames).toEqual([
      { type: 'connected', message: 'Stream established' },
      { type: 'stream', prompt: 'Hello ', delta: 'Hello ' },
      { type: 'stream', prompt: 'there.', delta: 'there.' },
      { type: 'complete', success: true, usage: 12, outputs: ['Hello there.'] },
      { type: 'done' },
    ]);
  });

  it('turns a provider failure into an error frame followed by done', async () => {
    model.enqueue({ status: 500, error: 'upstream exploded' });
    const frames = await readSse(await ask()).rest();
    expect(frames).toEqual([
      { type: 'connected', message: 'Stream established' },
      { type: 'error', error: { message: 'The model provider failed: upstream exploded (HTTP 500)' } },
      { type: 'done' },
    ]);
  });

  it('cancels the model call when the client closes the request', async () => {
    model.enqueue({ chunks: ['Only ', 'this ', 'never'], stallAfter: 2 });
    const client = new AbortController();
    const reader = readSse(await ask(client.signal));
    expect(await reader.next()).toMatchObject({ type: 'connected' });
    expect(await reader.next()).toMatchObject({ type: 'stream', delta: 'Only ' });
    expect(await reader.next()).toMatchObject({ type: 'stream', delta: 'this ' });
    client.abort();

    await until(() => results.length === 1 && model.requests.at(-1)?.aborted === true);
    expect(results[0]).toMatchObject({ cancelled: true, text: 'Only this ' });
  });
});

