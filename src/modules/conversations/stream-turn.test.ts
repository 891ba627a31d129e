// streamAnswer against the fake OpenAI-compatible server (a real loopback peer) and the built-in
// local model: deltas, usage, cancel with partial text and estimated usage, failures that keep the
// partial answer, behaviour 11's notice for an empty reply, and tool steps.
import { tool } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeModelServer, type FakeModelServer } from '../../../test/support/fake-model-server.js';
import { estimateTokens, formatContextSections } from '../../ai/prompt.js';
import { createModelRegistry, type ResolvedModel } from '../../ai/registry.js';
import { plainPrompt, type ToolStatus } from '../../ai/model-stream.js';
import { EMPTY_ANSWER_NOTICE, streamAnswer, type StreamAnswerInput } from './stream-turn.js';
import { toToolSet, type TurnToolSpec } from '../../ai/tools/turn-tools.js';
import { until } from '../../../test/support/until.js';

let server: FakeModelServer;
let model: ResolvedModel;
beforeAll(async () => {
  server = await startFakeModelServer();
  model = createModelRegistry({ baseUrl: server.url, apiKey: 'sk-test', defaultModel: 'fake-chat' }).resolveModel();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const question = [{ role: 'user' as const, content: 'What is new?' }];

function run(overrides: Partial<StreamAnswerInput> = {}) {
  const deltas: Array<[string, string]> = [];
  const done = streamAnswer({
    model,
    messages: question,
    onDelta: (delta, soFar) => deltas.push([delta, soFar]),
    ...overrides,
  });
  return { done, deltas };
}

describe('streamAnswer with an OpenAI-compatible endpoint', () => {
  it('hands each piece to onDelta with the text so far, and returns the provider usage', async () => {
    server.enqueue({ chunks: ['The ', 'garden ', 'is green.'], usage: { prompt_tokens: 42, completion_tokens: 7 } });
    const { done, deltas } = run();
    const result = await done;

    expect(deltas).toEqual([
      ['The ', 'The '],
      ['garden ', 'The garden '],
      ['is green.', 'The garden is green.'],
    ]);
    expect(result).toEqual({
      text: 'The garden is green.',
      usage: { inputTokens: 42, outputTokens: 7 },
      usageEstimated: false,
      finishReason: 'stop',
      cancelled: false,
      emptyReply: false,
      modelId: 'fake-chat',
    });
  });

  it('sends the system text, the history in order, max tokens and the reasoning effort', async () => {
    await run({
      system: 'You are the twin of Ada.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'And now?' },
      ],
      maxOutputTokens: 321,
      reasoningEffort: 'low',
    }).done;
    const [request] = server.requests;
    expect(request.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'You are the twin of Ada.'],
      ['user', 'Hi'],
      ['assistant', 'Hello!'],
      ['user', 'And now?'],
    ]);
    expect(request.body.max_tokens).toBe(321);
    expect(request.reasoningEffort).toBe('low');
  });

  it('ends gracefully on cancel with the partial text and an estimated usage', async () => {
    server.enqueue({ chunks: ['First part. ', 'Second part. ', 'never sent'], stallAfter: 2 });
    const controller = new AbortController();
    const { done, deltas } = run({
      signal: controller.signal,
      onDelta: (delta, soFar) => {
        deltas.push([delta, soFar]);
        if (deltas.length === 2) setTimeout(() => controller.abort(), 20);
      },
    });
    const result = await done;

    expect(result.cancelled).toBe(true);
    expect(result.failed).toBeUndefined();
    expect(result.finishReason).toBe('abort');
    expect(result.text).toBe('First part. Second part. ');
    // The provider sent no usage for the cut answer: output is the partial text's chars / 4,
    // input the prompt's chars / 4.
    expect(result.usageEstimated).toBe(true);
    expect(result.usage.outputTokens).toBe(estimateTokens('First part. Second part. '));
    expect(result.usage.inputTokens).toBe(estimateTokens('What is new?'));
    await until(() => server.requests[0]?.aborted === true);
  });

  it('stops calling onDelta once cancelled, even while chunks are still arriving', async () => {
    server.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e'], gapMs: 30 });
    const controller = new AbortController();
    const { done, deltas } = run({
      signal: controller.signal,
      onDelta: (delta, soFar) => {
        deltas.push([delta, soFar]);
        controller.abort();
      },
    });
    const result = await done;
    expect(deltas).toEqual([['a', 'a']]);
    expect(result).toMatchObject({ cancelled: true, text: 'a' });
  });

  it('does not call the provider when the turn was cancelled before it started', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await run({ signal: controller.signal }).done;
    expect(result).toMatchObject({ cancelled: true, text: '', usage: { inputTokens: 0, outputTokens: 0 } });
    expect(server.requests).toHaveLength(0);
  });

  it('answers an empty reply with the try-again notice, also through onDelta (behaviour 11)', async () => {
    server.enqueue({ chunks: [] });
    const { done, deltas } = run();
    const result = await done;
    expect(result).toMatchObject({ text: EMPTY_ANSWER_NOTICE, emptyReply: true, cancelled: false, finishReason: 'stop' });
    expect(result.failed).toBeUndefined();
    expect(deltas).toEqual([[EMPTY_ANSWER_NOTICE, EMPTY_ANSWER_NOTICE]]);
  });

  it('treats a whitespace-only reply as empty', async () => {
    server.enqueue({ chunks: ['  ', '\n'] });
    const result = await run().done;
    expect(result).toMatchObject({ text: EMPTY_ANSWER_NOTICE, emptyReply: true });
  });

  it('turns a provider error into a clear failure instead of throwing', async () => {
    server.enqueue({ status: 500, error: 'the upstream model is overloaded' });
    const result = await run({ maxRetries: 0 }).done;
    expect(result).toMatchObject({
      text: '',
      cancelled: false,
      emptyReply: false,
      finishReason: 'error',
      failed: { message: 'The model provider failed: the upstream model is overloaded (HTTP 500)' },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('retries the initial call once by default, then fails with the last error', async () => {
    server.enqueue({ status: 503, error: 'busy' });
    server.enqueue({ chunks: ['recovered'] });
    expect((await run().done).text).toBe('recovered');
    expect(server.requests).toHaveLength(2);

    server.requests.length = 0;
    server.enqueue({ status: 429, error: 'slow down' });
    server.enqueue({ status: 429, error: 'slow down again' });
    const result = await run().done;
    expect(result.failed?.message).toBe('The model provider failed: slow down again (HTTP 429)');
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a client error such as a bad key', async () => {
    server.enqueue({ status: 401, error: 'Incorrect API key provided' });
    const result = await run().done;
    expect(result.failed?.message).toBe('The model provider failed: Incorrect API key provided (HTTP 401)');
    expect(server.requests).toHaveLength(1);
  });

  it('fails clearly when the endpoint cannot be reached', async () => {
    const unreachable = createModelRegistry({ baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'm' }).resolveModel();
    const result = await run({ model: unreachable, maxRetries: 0 }).done;
    expect(result.failed?.message).toMatch(/^The model provider failed: .+/);
    expect(result.cancelled).toBe(false);
  });

  it('keeps the partial answer when the provider drops the connection mid-answer', async () => {
    const flaky = await startFakeModelServer();
    try {
      const flakyModel = createModelRegistry({ baseUrl: flaky.url, defaultModel: 'm' }).resolveModel();
      flaky.enqueue({ chunks: ['Half an ', 'answer', 'never'], stallAfter: 2 });
      const { done } = run({
        model: flakyModel,
        onDelta: (_delta, soFar) => {
          if (soFar === 'Half an answer') void flaky.close();
        },
      });
      const result = await done;
      expect(result.text).toBe('Half an answer');
      expect(result.failed?.message).toMatch(/^The model provider failed: /);
      expect(result.cancelled).toBe(false);
      expect(result.usage.outputTokens).toBe(estimateTokens('Half an answer'));
    } finally {
      await flaky.close().catch(() => {});
    }
  });

  it('reports each tool call through the tool set and sums the usage of every step', async () => {
    server.enqueue({
      toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { topic: 'bees' } }],
      usage: { prompt_tokens: 10, completion_tokens: 3 },
    });
    server.enqueue({ chunks: ['Bees ', 'are busy.'], usage: { prompt_tokens: 20, completion_tokens: 4 } });
    const tools: Array<[string, ToolStatus]> = [];
    const lookup: TurnToolSpec = {
      key: 'lookup',
      description: 'Looks a topic up',
      inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
      run: async (args, context) => {
        context.status('started');
        return { text: `Notes on ${(args as { topic: string }).topic}` };
      },
    };
    const result = await run({ tools: await toToolSet([lookup], (name, status) => tools.push([name, status])) }).done;

    expect(tools).toEqual([
      ['lookup', 'started'],
      ['lookup', 'completed'],
    ]);
    expect(result).toMatchObject({ text: 'Bees are busy.', usage: { inputTokens: 30, outputTokens: 7 }, usageEstimated: false });
    const toolMessage = server.requests[1].messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(toolMessage)).toContain('Notes on bees');
  });

  it('reports a failing tool as failed, tells the model why and lets it answer anyway', async () => {
    server.enqueue({ toolCalls: [{ id: 'call_2', name: 'broken', arguments: {} }] });
    server.enqueue({ chunks: ['Sorry, no luck.'] });
    const tools: Array<[string, ToolStatus]> = [];
    const broken: TurnToolSpec = {
      key: 'broken',
      description: 'Always fails',
      inputSchema: { type: 'object', properties: {} },
      run: async (_args, context) => {
        context.status('started');
        throw new Error('tool exploded');
      },
    };
    const { done } = run({ tools: await toToolSet([broken], (name, status) => tools.push([name, status])) });
    expect((await done).text).toBe('Sorry, no luck.');
    expect(tools).toEqual([
      ['broken', 'started'],
      ['broken', 'failed'],
    ]);
    const toolMessage = server.requests[1].messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(toolMessage)).toContain('The tool failed: tool exploded');
  });

  it("makes the model call a tool in its first step when the assistant's mode is required, and only then", async () => {
    server.enqueue({ toolCalls: [{ id: 'call_3', name: 'lookup', arguments: { topic: 'ants' } }] });
    server.enqueue({ chunks: ['Ants.'] });
    const lookup: TurnToolSpec = {
      key: 'lookup',
      description: 'Looks a topic up',
      inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
      run: async () => ({ text: 'notes' }),
    };
    await run({ tools: await toToolSet([lookup], () => {}), toolChoice: 'required' }).done;
    expect(server.requests[0].body.tool_choice).toBe('required');
    expect(server.requests[1].body.tool_choice).not.toBe('required');
  });
});

describe('the two ways to the model: directly without tools, through streamText with tools', () => {
  const unused = tool({ description: 'Never called', inputSchema: z.object({}), execute: async () => 'nothing' });
  const scripted = () => server.enqueue({ chunks: ['Same ', 'answer ', 'both ways.'], usage: { prompt_tokens: 30, completion_tokens: 6 } });
  const turn = {
    system: 'You are the twin of Ada.',
    messages: [
      { role: 'user' as const, content: 'Hi' },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Hello!' }] },
      { role: 'user' as const, content: 'And now?' },
    ],
    maxOutputTokens: 99,
    reasoningEffort: 'medium' as const,
  };

  it('gives the same pieces, result and provider request either way', async () => {
    scripted();
    const direct = run(turn);
    const directResult = await direct.done;
    scripted();
    const viaSdk = run({ ...turn, tools: { unused } });
    const sdkResult = await viaSdk.done;

    expect(direct.deltas).toEqual(viaSdk.deltas);
    expect(directResult).toEqual(sdkResult);
    expect(directResult).toMatchObject({ text: 'Same answer both ways.', usage: { inputTokens: 30, outputTokens: 6 }, finishReason: 'stop' });
    const [directRequest, sdkRequest] = server.requests;
    // The same body but for the tools the streamText turn offered.
    const { tools: _tools, tool_choice: _choice, ...sdkBody } = sdkRequest.body;
    expect(directRequest.body).toEqual(sdkBody);
    expect(JSON.stringify(Object.keys(directRequest.body))).toBe(JSON.stringify(Object.keys(sdkBody)));
    expect(directRequest.path).toBe(sdkRequest.path);
    expect(directRequest.headers.authorization).toBe('Bearer sk-test');
    expect(sdkRequest.headers.authorization).toBe('Bearer sk-test');
    expect(directRequest.headers['content-type']).toBe(sdkRequest.headers['content-type']);
    expect(directRequest.messages).toEqual(sdkRequest.messages);
    expect(directRequest.body.max_tokens).toBe(99);
    expect(sdkRequest.body.max_tokens).toBe(99);
    expect(directRequest.reasoningEffort).toBe('medium');
    expect(sdkRequest.reasoningEffort).toBe('medium');
    expect(directRequest.tools ?? []).toEqual([]);
    expect(sdkRequest.tools.map((t) => t.function.name)).toEqual(['unused']);
  });

  it('keeps a message that is not plain text on the streamText path', () => {
    expect(plainPrompt('Sys', [{ role: 'user', content: 'Hi' }])).toEqual([
      { role: 'system', content: 'Sys' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    ]);
    const image = { role: 'user' as const, content: [{ type: 'image' as const, image: new URL('https://example.test/a.png') }] };
    expect(plainPrompt(undefined, [image])).toBeUndefined();
    expect(plainPrompt(undefined, [{ role: 'tool', content: [] }])).toBeUndefined();
  });
});

describe('streamAnswer with a provider that reports no usage', () => {
  it('estimates the usage and says so', async () => {
    const mock = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: '1' },
            { type: 'text-delta', id: '1', delta: 'Twelve chars' },
            { type: 'text-end', id: '1' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {
                inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
                outputTokens: { total: undefined, text: undefined, reasoning: undefined },
              },
            },
          ],
        }),
      }),
    });
    const resolved: ResolvedModel = { model: mock, kind: 'endpoint', modelId: 'mock', providerOptions: () => undefined };
    const result = await run({ model: resolved, system: 'Sys' }).done;
    expect(result).toMatchObject({ text: 'Twelve chars', usageEstimated: true });
    expect(result.usage).toEqual({ inputTokens: estimateTokens('Sys\nWhat is new?'), outputTokens: estimateTokens('Twelve chars') });
  });
});

describe('streamAnswer with the built-in local model', () => {
  const local = createModelRegistry({}).resolveModel();
  const system = `You are a twin.\n\n${formatContextSections({ passages: ['The library opens at nine every weekday.'] })}`;

  it('streams the extractive answer in pieces with the local usage', async () => {
    const { done, deltas } = run({ model: local, system, messages: [{ role: 'user', content: 'When does the library open?' }], reasoningEffort: 'high' });
    const result = await done;
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.at(-1)?.[1]).toBe(result.text);
    expect(result.text).toContain('The library opens at nine every weekday.');
    expect(result).toMatchObject({ cancelled: false, usageEstimated: false, modelId: 'built-in-local' });
    expect(result.usage.outputTokens).toBe(estimateTokens(result.text));
  });

  it('cancels mid-answer with the partial text', async () => {
    const controller = new AbortController();
    const { done, deltas } = run({
      model: local,
      system,
      messages: [{ role: 'user', content: 'When does the library open?' }],
      signal: controller.signal,
      onDelta: (delta, soFar) => {
        deltas.push([delta, soFar]);
        controller.abort();
      },
    });
    const result = await done;
    expect(result.cancelled).toBe(true);
    expect(deltas).toHaveLength(1);
    expect(result.text).toBe(deltas[0][1]);
    expect(result.usage.outputTokens).toBe(estimateTokens(result.text));
  });
});

