// The model registry: turns "which model answers this turn" into an AI SDK language model.
// Sources: the deployment's OpenAI-compatible endpoint (OPENAI_BASE_URL/OPENAI_API_KEY/DEFAULT_MODEL,
// optionally with an assistant's conversationModel), an explicit endpoint (a twin's custom model),
// or the built-in local model when nothing is configured. Also owns reasoning-effort clamping (behaviour 12).
// An explicit endpoint an administrator set is reached only through the outbound guard (the provider's
// fetch, and the lean chat stream's check); the deployment's own endpoints are trusted.
import { createHash } from 'node:crypto';
import { createOpenAICompatible, type OpenAICompatibleProvider } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3, SharedV3ProviderOptions } from '@ai-sdk/provider';
import type { Outbound } from '../platform/net/outbound.js';
import type { ChatEndpoint } from './chat-stream.js';
import { createLocalModel } from './local-model.js';

/** The public OpenAI endpoint, used when only OPENAI_API_KEY is set. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Used when an endpoint is configured without DEFAULT_MODEL. */
export const FALLBACK_MODEL_ID = 'gpt-4o-mini';
/**
 * The provider name given to every OpenAI-compatible provider, hence also the providerOptions key
 * its chat model reads (`providerOptions.endpoint.reasoningEffort` → `reasoning_effort` on the wire).
 */
export const ENDPOINT_PROVIDER_NAME = 'endpoint';

export interface DeploymentModelConfig {
  baseUrl?: string;
  apiKey?: string;
  defaultModel?: string;
}

export type ModelSource =
  /** The deployment's endpoint; `model` (an assistant's conversationModel) replaces DEFAULT_MODEL. */
  | { kind: 'default'; model?: string }
  /**
   * An explicit endpoint, such as a twin's custom model. `outbound`: the guard its requests go through
   * when an administrator set the URL; null for a URL of the deployment's configuration (trusted).
   */
  | { kind: 'endpoint'; baseUrl: string; apiKey?: string; model: string; outbound: Outbound | null }
  /** The built-in local model, whatever is configured. */
  | { kind: 'local' };

export interface ResolvedModel {
  model: LanguageModelV3;
  /** 'endpoint' for an OpenAI-compatible server, 'local' for the built-in model. */
  kind: 'endpoint' | 'local';
  modelId: string;
  /** For an endpoint model: where a plain-text turn streams from directly (chat-stream.ts). */
  chat?: ChatEndpoint;
  /** The providerOptions that carry the given reasoning effort to this model (empty when none applies). */
  providerOptions(effort: ClampedReasoningEffort | undefined): SharedV3ProviderOptions | undefined;
}

export interface ModelRegistry {
  resolveModel(source?: ModelSource): ResolvedModel;
  /** True when the deployment has an endpoint; false means the built-in local model answers. */
  readonly hasDeploymentEndpoint: boolean;
  /** How many provider instances are cached (one per distinct endpoint and key). */
  readonly providerCount: number;
}

const MAX_CACHED_MODELS = 1_000;

export function createModelRegistry(config: DeploymentModelConfig): ModelRegistry {
  const providers = new Map<string, OpenAICompatibleProvider>();
  // A chat model instance builds its chunk schemas when created: one per endpoint and model id, reused by every turn.
  const models = new Map<string, ResolvedModel>();
  const local = localModel();
  const deploymentBaseUrl = config.baseUrl ?? (config.apiKey ? OPENAI_DEFAULT_BASE_URL : undefined);

  /** One provider per endpoint (base URL + key + guard): its fetch settings and headers are built once. */
  function provider(key: string, baseUrl: string, apiKey: string | undefined, outbound: Outbound | null): OpenAICompatibleProvider {
    let existing = providers.get(key);
    if (!existing) {
      existing = createOpenAICompatible({
        name: ENDPOINT_PROVIDER_NAME,
        baseURL: normaliseBaseUrl(baseUrl),
        apiKey,
        includeUsage: true,
        ...(outbound ? { fetch: outbound.fetch as typeof globalThis.fetch } : {}),
      });
      providers.set(key, existing);
    }
    return existing;
  }

  function endpointModel(baseUrl: string, apiKey: string | undefined, modelId: string, outbound: Outbound | null): ResolvedModel {
    const endpointKey = `${outbound ? 'guarded' : 'trusted'}\n${normaliseBaseUrl(baseUrl)}\n${apiKey ? createHash('sha256').update(apiKey).digest('hex') : ''}`;
    const modelKey = `${endpointKey}\n${modelId}`;
    const cached = models.get(modelKey);
    if (cached) return cached;
    // Model ids come from configuration and custom models, a bounded set; keys are not (a chat subscription's
    // access token changes at each refresh), so past the cap both caches start again.
    if (models.size >= MAX_CACHED_MODELS) {
      models.clear();
      providers.clear();
    }
    const resolved = newEndpointModel(provider(endpointKey, baseUrl, apiKey, outbound), modelId, chatEndpoint(baseUrl, apiKey, modelId, outbound));
    models.set(modelKey, resolved);
    return resolved;
  }

  function newEndpointModel(endpoint: OpenAICompatibleProvider, modelId: string, chat: ChatEndpoint | undefined): ResolvedModel {
    return {
      model: endpoint.chatModel(modelId),
      kind: 'endpoint',
      modelId,
      chat,
      providerOptions: (effort) => {
        const wire = reasoningEffortOnWire(effort);
        return wire ? { [ENDPOINT_PROVIDER_NAME]: { reasoningEffort: wire } } : undefined;
      },
    };
  }

  return {
    hasDeploymentEndpoint: deploymentBaseUrl !== undefined,
    get providerCount() {
      return providers.size;
    },
    resolveModel(source = { kind: 'default' }) {
      switch (source.kind) {
        case 'local':
          return local;
        case 'endpoint':
          return endpointModel(source.baseUrl, source.apiKey, source.model, source.outbound);
        case 'default': {
          if (!deploymentBaseUrl) return local;
          const modelId = source.model?.trim() || config.defaultModel || FALLBACK_MODEL_ID;
          return endpointModel(deploymentBaseUrl, config.apiKey, modelId, null);
        }
      }
    },
  };
}

function localModel(): ResolvedModel {
  const model = createLocalModel();
  // The local model does not reason: it never gets a reasoning option.
  return { model, kind: 'local', modelId: model.modelId, providerOptions: () => undefined };
}

/** The URL and key the SDK's provider uses for this model; none for a URL that does not parse (the SDK then fails the turn clearly). */
function chatEndpoint(baseUrl: string, apiKey: string | undefined, modelId: string, outbound: Outbound | null): ChatEndpoint | undefined {
  const address = `${normaliseBaseUrl(baseUrl)}/chat/completions`;
  if (!URL.canParse(address)) return undefined;
  const url = new URL(address);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const headers: Record<string, string> = { 'user-agent': 'digital-twin-service' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return { url, headers, modelId, guard: outbound?.policy ?? null };
}

function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

// ---- Reasoning effort (behaviour 12) ----

export const REASONING_LEVELS = ['minimal', 'low', 'medium', 'high'] as const;
export type ReasoningLevel = (typeof REASONING_LEVELS)[number];
/**
 * The one list of reasoning efforts, whoever sets one: a twin's Reasoning Effort, an assistant's voice
 * effort (stsReasoningEffort), a custom model's minimum. 'off' turns reasoning off (sent to providers as
 * OpenAI's 'none'); as a custom model's minimum it says the model reasons but has no minimum.
 */
export const REASONING_EFFORTS = ['off', ...REASONING_LEVELS] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];
export type RequestedReasoningEffort = ReasoningEffort;
export type ClampedReasoningEffort = ReasoningEffort;

/**
 * The effort a turn runs with: a level below the model's minimum is raised to that minimum; 'off'
 * is respected whatever the minimum; nothing requested stays nothing (the model's own default).
 */
export function clampReasoningEffort(
  requested: RequestedReasoningEffort | undefined,
  modelMinimum?: ReasoningLevel,
): ClampedReasoningEffort | undefined {
  if (requested === undefined || requested === 'off' || modelMinimum === undefined) return requested;
  return REASONING_LEVELS.indexOf(requested) < REASONING_LEVELS.indexOf(modelMinimum) ? modelMinimum : requested;
}

/** The `reasoning_effort` value sent to an OpenAI-compatible server: 'off' is OpenAI's 'none'. */
export function reasoningEffortOnWire(effort: ClampedReasoningEffort | undefined): string | undefined {
  if (effort === undefined) return undefined;
  return effort === 'off' ? 'none' : effort;
}
