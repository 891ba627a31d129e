// The model a turn (or one of its subagents) runs on, and its price: the assistant's model by name, a
// custom model of the twin first, then the twin's chat subscription, then the deployment's endpoint; and
// the reasoning effort sent to it (behaviour 12).
import { clampReasoningEffort, OPENAI_DEFAULT_BASE_URL, type ClampedReasoningEffort, type ReasoningEffort, type ResolvedModel } from '../../ai/registry.js';
import type { ResolvedAssistant } from '../assistants/resolver.js';
import { findModelForTurn, type ModelForTurn } from '../custom-models/model-lookup.js';
import { FREE, type Price } from './turn-billing.js';
import type { TurnDeps } from './turn-deps.js';

export interface ModelChoice {
  resolved: ResolvedModel;
  price: Price;
  custom: ModelForTurn | null;
}

type ModelDeps = Pick<TurnDeps, 'db' | 'secrets' | 'models' | 'deploymentModel' | 'outbound' | 'deploymentPrice' | 'subscriptionModel'>;

/** The assistant's model by name: a custom model available to the twin, else that id on the twin's subscription when connected, else on the deployment endpoint. */
export async function chooseModel(deps: ModelDeps, twinId: string, assistant: ResolvedAssistant): Promise<ModelChoice> {
  const name = assistant.conversationModel;
  const custom = name ? await findModelForTurn(deps.db, deps.secrets, twinId, name) : null;
  if (custom) {
    const price = { inputPer1k: custom.inputPricePer1k, outputPer1k: custom.outputPricePer1k };
    const resolved =
      custom.baseUrl || custom.apiKey
        ? deps.models.resolveModel({
            kind: 'endpoint',
            baseUrl: custom.baseUrl || deps.deploymentModel.baseUrl || OPENAI_DEFAULT_BASE_URL,
            // The deployment's key goes to the deployment's endpoint only, never to a URL an administrator set.
            apiKey: custom.apiKey ?? (custom.baseUrl ? undefined : deps.deploymentModel.apiKey),
            model: custom.model,
            outbound: custom.baseUrl ? deps.outbound : null,
          })
        : deps.models.resolveModel({ kind: 'default', model: custom.model });
    return { resolved, price, custom };
  }
  // A twin connected to a chat subscription uses its API, paid by the subscription: no credits charged.
  const subscription = await deps.subscriptionModel(twinId);
  if (subscription) {
    return { resolved: deps.models.resolveModel({ kind: 'endpoint', ...subscription, model: name || subscription.model, outbound: null }), price: FREE, custom: null };
  }
  const resolved = deps.models.resolveModel({ kind: 'default', ...(name ? { model: name } : {}) });
  return { resolved, price: resolved.kind === 'local' ? FREE : deps.deploymentPrice, custom: null };
}

/**
 * Behaviour 12. The effort is sent only to a custom model that declares a minimum reasoning effort
 * (a reasoning model): the twin's effort, raised to that minimum, with 'off' respected. Other models
 * get no reasoning parameter (non-reasoning endpoints refuse it).
 */
export function reasoningFor(twinEffort: ReasoningEffort, custom: ModelForTurn | null): ClampedReasoningEffort | undefined {
  if (!custom?.minReasoningEffort) return undefined;
  const minimum = custom.minReasoningEffort === 'off' ? undefined : custom.minReasoningEffort;
  return clampReasoningEffort(twinEffort, minimum);
}
