// Checks the fake model server against the real AI SDK client, so later engine tests can trust
// that what the fake sends is what an OpenAI-compatible server would send.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embed, embedMany, generateText, stepCountIs, streamText, tool } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fakeEmbedding, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';

let server: FakeModelServer;
let provider: ReturnType<typeof createOpenAICompatible>;

beforeEach(async () => {
  server = await startFakeModelServer();
  provider = createOpenAICompatible({ name: 'fake', baseURL: server.url, apiKey: 'test', includeUsage: true });
});

afterEach(async () => {
  await server.close();
});

describe('chat completions', () => {
  it('streams the enqueued chunks in order and reports usage', async () => {
    server.enqueue({ chunks: ['Hello', ', ', 'world', '!'], gapMs: 5, usage: { prompt_tokens: 11, completion_tokens: 4 } });
    const result = streamText({ model: provider.chatModel('m1'), system: 'Be brief.', prompt: 'Say hello' });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);

    expect(deltas).toEqual(['Hello', ', ', 'world', '!']);
    expect(await result.text).toBe('Hello, world!');
    expect(await result.finishReason).toBe('stop');
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(11);
    expect(usage.outputTokens).toBe(4);
  });

  it('records the request body and headers', async () => {
    await streamText({ model: provider.chatModel('m1'), system: 'You are Ada.', prompt: 'Hi there' }).consumeStream();
    await generateText({
      model: provider.chatModel('m2'),
      prompt: 'Think',
      providerOptions: { fake: { reasoningEffort: 'low' } },
    });

    expect(server.requests).toHaveLength(2);
    const [streamed, generated] = server.requests;
    expect(streamed).toMatchObject({ path: '/v1/chat/completions', model: 'm1', stream: true, system: 'You are Ada.' });
    expect(streamed.messages).toEqual([
      { role: 'system', content: 'You are Ada.' },
      { role: 'user', content: 'Hi there' },
    ]);
    expect(streamed.body.stream_options).toEqual({ include_usage: true });
    expect(streamed.headers.authorization).toBe('Bearer test');
    expect(generated).toMatchObject({ model: 'm2', stream: false, reasoningEffort: 'low' });
    expect(generated.system).toBe('');
  });

  it('answers with the default, then a simple ok', async () => {
    expect((await generateText({ model: provider.chatModel('m'), prompt: 'x' })).text).toBe('ok');
    server.setDefault({ chunks: ['always'] });
    expect((await generateText({ model: provider.chatModel('m'), prompt: 'x' })).text).toBe('always');
    expect((await streamText({ model: provider.chatModel('m'), prompt: 'x' }).text)).toBe('always');
  });

  it('streams a tool call that the SDK parses and runs', async () => {
    server.enqueue({ toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { query: 'bees', limit: 2 } }] });
    server.enqueue({ chunks: ['Found ', 'bees.'] });
    const seen: unknown[] = [];
    const result = streamText({
      model: provider.chatModel('m'),
      prompt: 'Find bees',
      stopWhen: stepCountIs(2),
      tools: {
        lookup: tool({
          description: 'Search the files',
          inputSchema: z.object({ query: z.string(), limit: z.number() }),
          execute: async (input) => {
            seen.push(input);
            return 'bees live on the roof';
          },
        }),
      },
    });

    expect(await result.text).toBe('Found bees.');
    expect(seen).toEqual([{ query: 'bees', limit: 2 }]);
    const steps = await result.steps;
    expect(steps[0].finishReason).toBe('tool-calls');
    expect(steps[0].toolCalls).toMatchObject([{ toolCallId: 'call_1', toolName: 'lookup', input: { query: 'bees', limit: 2 } }]);

    const [first, second] = server.requests;
    expect(first.tools).toMatchObject([{ type: 'function', function: { name: 'lookup', description: 'Search the files' } }]);
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
  });

  it('returns a tool call without streaming too', async () => {
    server.enqueue({ toolCalls: [{ id: 'call_2', name: 'lookup', arguments: { query: 'tea' } }] });
    const result = await generateText({
      model: provider.chatModel('m'),
      prompt: 'Find tea',
      tools: { lookup: tool({ inputSchema: z.object({ query: z.string() }) }) },
    });
    expect(result.finishReason).toBe('tool-calls');
    expect(result.toolCalls).toMatchObject([{ toolCallId: 'call_2', toolName: 'lookup', input: { query: 'tea' } }]);
  });

  it('surfaces an error reply as an error', async () => {
    server.enqueue({ status: 500, error: 'model exploded' });
    const errors: unknown[] = [];
    const result = streamText({
      model: provider.chatModel('m'),
      prompt: 'x',
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toContain('model exploded');

    server.enqueue({ status: 429, error: 'slow down' });
    await expect(generateText({ model: provider.chatModel('m'), prompt: 'x', maxRetries: 0 })).rejects.toThrow('slow down');
  });

  it('streams an empty answer', async () => {
    server.enqueue({ chunks: [] });
    const result = streamText({ model: provider.chatModel('m'), prompt: 'x' });
    expect(await result.text).toBe('');
    expect(await result.finishReason).toBe('stop');
  });

  it('holds a stalled answer open until the client aborts', async () => {
    server.enqueue({ chunks: ['one ', 'two ', 'three'], stallAfter: 1 });
    const controller = new AbortController();
    const result = streamText({ model: provider.chatModel('m'), prompt: 'x', abortSignal: controller.signal });
    const deltas: string[] = [];
    const types: string[] = [];
    for await (const part of result.fullStream) {
      types.push(part.type);
      if (part.type === 'text-delta') {
        deltas.push(part.text);
        setTimeout(() => controller.abort(), 20);
      }
    }
    expect(deltas).toEqual(['one ']);
    expect(types.at(-1)).toBe('abort');
    await expect.poll(() => server.requests[0].aborted).toBe(true);

    // The server is still healthy afterwards.
    expect((await generateText({ model: provider.chatModel('m'), prompt: 'x' })).text).toBe('ok');
  });

  it('answers an unknown route with a 404 JSON error', async () => {
    const response = await fetch(`${server.url}/models`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringContaining('/v1/models') } });
    expect(server.requests).toHaveLength(0);
  });
});

describe('embeddings', () => {
  it('returns deterministic, normalised vectors of the default dimension', async () => {
    const model = provider.embeddingModel('e1');
    const { embedding, usage } = await embed({ model, value: 'bees on the roof' });
    const again = await embed({ model, value: 'bees on the roof' });

    expect(embedding).toHaveLength(64);
    expect(again.embedding).toEqual(embedding);
    expect(embedding).toEqual(fakeEmbedding('bees on the roof'));
    expect(Math.hypot(...embedding)).toBeCloseTo(1, 10);
    expect(usage.tokens).toBeGreaterThan(0);
    expect(server.requests[0]).toMatchObject({ path: '/v1/embeddings', model: 'e1', input: ['bees on the roof'] });
  });

  it('embeds many values, honouring a requested dimension', async () => {
    const { embeddings } = await embedMany({
      model: provider.embeddingModel('e1'),
      values: ['bees', 'tea with honey', 'bees'],
      providerOptions: { fake: { dimensions: 16 } },
    });
    expect(embeddings.map((e) => e.length)).toEqual([16, 16, 16]);
    expect(embeddings[0]).toEqual(embeddings[2]);
    expect(embeddings[0]).not.toEqual(embeddings[1]);
  });

  it('uses the dimension the server was started with', async () => {
    const wide = await startFakeModelServer({ embeddingDimensions: 128 });
    try {
      const model = createOpenAICompatible({ name: 'fake', baseURL: wide.url, apiKey: 'test' }).embeddingModel('e');
      expect((await embed({ model, value: 'x' })).embedding).toHaveLength(128);
    } finally {
      await wide.close();
    }
  });
});
