// The model registry against the fake OpenAI-compatible server: which endpoint, key and model a
// source resolves to, the local fallback, provider caching, and reasoning effort on the wire.
import { streamText } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../test/support/fake-model-server.js';
import {
  clampReasoningEffort,
  createModelRegistry,
  FALLBACK_MODEL_ID,
  reasoningEffortOnWire,
  type ClampedReasoningEffort,
  type ResolvedModel,
} from './registry.js';

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

async function ask(resolved: ResolvedModel, effort?: ClampedReasoningEffort): Promise<string> {
  const result = streamText({
    model: resolved.model,
    prompt: 'Hello?',
    maxRetries: 0,
    providerOptions: resolved.providerOptions(effort),
  });
  return result.text;
}

describe('resolveModel', () => {
  it('uses the deployment endpoint, key and DEFAULT_MODEL for the default source', async () => {
    const registry = createModelRegistry({ baseUrl: server.url, apiKey: 'sk-deploy', defaultModel: 'deploy-model' });
    server.enqueue({ chunks: ['Hi ', 'there'] });
    const resolved = registry.resolveModel();
    expect(resolved).toMatchObject({ kind: 'endpoint', modelId: 'deploy-model' });

    expect(await ask(resolved)).toBe('Hi there');
    const [request] = server.requests;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.model).toBe('deploy-model');
    expect(request.headers.authorization).toBe('Bearer sk-deploy');
    expect(request.stream).toBe(true);
    // includeUsage: the server is asked for the usage chunk.
    expect(request.body.stream_options).toEqual({ include_usage: true });
  });

  it("lets an assistant's conversationModel replace the deployment model on the same endpoint", async () => {
    const registry = createModelRegistry({ baseUrl: server.url, apiKey: 'sk-deploy', defaultModel: 'deploy-model' });
    await ask(registry.resolveModel({ kind: 'default', model: 'assistant-model' }));
    expect(server.requests[0].model).toBe('assistant-model');
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-deploy');
    // A blank override keeps the default.
    expect(registry.resolveModel({ kind: 'default', model: '  ' }).modelId).toBe('deploy-model');
  });

  it('falls back to a named model when the endpoint has no DEFAULT_MODEL', () => {
    const registry = createModelRegistry({ baseUrl: server.url });
    expect(registry.resolveModel().modelId).toBe(FALLBACK_MODEL_ID);
  });

  it("calls an explicit endpoint (a twin's custom model) with its own key and model", async () => {
    const registry = createModelRegistry({});
    const resolved = registry.resolveModel({ kind: 'endpoint', baseUrl: `${server.url}/`, apiKey: 'sk-twin', model: 'twin-model', outbound: null });
    server.enqueue({ chunks: ['custom'] });
    expect(await ask(resolved)).toBe('custom');
    expect(server.requests[0]).toMatchObject({ model: 'twin-model', path: '/v1/chat/completions' });
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-twin');
  });

  it('sends no authorization header to an endpoint without a key', async () => {
    const registry = createModelRegistry({});
    await ask(registry.resolveModel({ kind: 'endpoint', baseUrl: server.url, model: 'open-model', outbound: null }));
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it('answers with the built-in local model when nothing is configured, without any request', async () => {
    const registry = createModelRegistry({});
    expect(registry.hasDeploymentEndpoint).toBe(false);
    const resolved = registry.resolveModel({ kind: 'default', model: 'ignored-override' });
    expect(resolved).toMatchObject({ kind: 'local', modelId: 'built-in-local' });
    expect(await ask(resolved, 'high')).toContain('built-in local model');
    expect(resolved.providerOptions('high')).toBeUndefined();
    expect(server.requests).toHaveLength(0);
  });

  it('uses the public OpenAI endpoint when only a key is configured', () => {
    const registry = createModelRegistry({ apiKey: 'sk-only' });
    expect(registry.hasDeploymentEndpoint).toBe(true);
    expect(registry.resolveModel().model.provider).toBe('endpoint.chat');
  });

  it('resolves the local model explicitly even when an endpoint is configured', () => {
    const registry = createModelRegistry({ baseUrl: server.url, defaultModel: 'm' });
    expect(registry.resolveModel({ kind: 'local' }).kind).toBe('local');
  });

  it('caches one provider per endpoint and key', () => {
    const registry = createModelRegistry({ baseUrl: server.url, apiKey: 'k1', defaultModel: 'm' });
    registry.resolveModel();
    registry.resolveModel({ kind: 'default', model: 'other' });
    registry.resolveModel({ kind: 'endpoint', baseUrl: `${server.url}/`, apiKey: 'k1', model: 'x', outbound: null });
    expect(registry.providerCount).toBe(1);
    registry.resolveModel({ kind: 'endpoint', baseUrl: server.url, apiKey: 'k2', model: 'x', outbound: null });
    registry.resolveModel({ kind: 'endpoint', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k1', model: 'x', outbound: null });
    expect(registry.providerCount).toBe(3);
  });
});

describe('reasoning effort', () => {
  it('raises a level below the model minimum to the minimum (behaviour 12)', () => {
    expect(clampReasoningEffort('minimal', 'medium')).toBe('medium');
    expect(clampReasoningEffort('low', 'medium')).toBe('medium');
    expect(clampReasoningEffort('low', 'high')).toBe('high');
  });

  it('keeps a level at or above the minimum, and any level when the model has no minimum', () => {
    expect(clampReasoningEffort('medium', 'medium')).toBe('medium');
    expect(clampReasoningEffort('high', 'low')).toBe('high');
    expect(clampReasoningEffort('minimal')).toBe('minimal');
  });

  it("respects 'off' whatever the minimum, and leaves an unset effort unset", () => {
    expect(clampReasoningEffort('off', 'high')).toBe('off');
    expect(clampReasoningEffort(undefined, 'high')).toBeUndefined();
  });

  it("maps 'off' to OpenAI's 'none' on the wire", () => {
    expect(reasoningEffortOnWire('off')).toBe('none');
    expect(reasoningEffortOnWire('low')).toBe('low');
    expect(reasoningEffortOnWire(undefined)).toBeUndefined();
  });

  it('reaches the OpenAI-compatible server as reasoning_effort, clamped', async () => {
    const registry = createModelRegistry({ baseUrl: server.url, defaultModel: 'reasoner' });
    const resolved = registry.resolveModel();
    await ask(resolved, clampReasoningEffort('minimal', 'medium'));
    await ask(resolved, clampReasoningEffort('off', 'medium'));
    await ask(resolved, clampReasoningEffort(undefined, 'medium'));
    expect(server.requests.map((r) => r.reasoningEffort)).toEqual(['medium', 'none', undefined]);
    expect('reasoning_effort' in server.requests[2].body).toBe(false);
  });
});

describe('provider cache', () => {
  it('keeps the provider cache bounded when keys keep changing (a subscription token refreshed again and again)', () => {
    const registry = createModelRegistry({});
    for (let refresh = 0; refresh < 2_500; refresh++) registry.resolveModel({ kind: 'endpoint', baseUrl: 'http://127.0.0.1:9/v1', apiKey: `token-${refresh}`, model: 'x', outbound: null });
    expect(registry.providerCount).toBeLessThanOrEqual(1_000);
  });
});
