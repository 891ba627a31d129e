// What the conversation engine needs to call a custom model for one turn: endpoint, decrypted key,
// provider model id, minimum reasoning effort (behaviour 12) and prices. Server-side only.
import type { Executor } from '../../platform/db/client.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { ReasoningEffort } from '../../ai/registry.js';
import { findAvailableModel } from './custom-models.repo.js';
import type { ModelProvider } from './custom-models.tables.js';

export interface ModelForTurn {
  id: string;
  name: string;
  /** The provider's model id to send. */
  model: string;
  provider: ModelProvider;
  /** '' means the deployment's default endpoint (OPENAI_BASE_URL). */
  baseUrl: string;
  /** Decrypted; null when none is stored (the deployment's key applies on the deployment's endpoint only: baseUrl ''). */
  apiKey: string | null;
  minReasoningEffort: ReasoningEffort | null;
  maxTokens: number;
  contextWindow: number;
  inputPricePer1k: number;
  outputPricePer1k: number;
}

/** The active model named `modelName` available to the twin (its own first, then deployment-wide), or null. */
export async function findModelForTurn(
  db: Executor,
  secrets: Pick<SecretBox, 'decrypt'>,
  twinId: string | null,
  modelName: string,
): Promise<ModelForTurn | null> {
  if (!modelName) return null;
  const row = await findAvailableModel(db, twinId, modelName);
  if (!row) return null;
  return {
    id: row.id,
    name: row.name,
    model: row.model,
    provider: row.provider,
    baseUrl: row.baseUrl,
    apiKey: row.apiKeySealed ? secrets.decrypt(row.apiKeySealed) : null,
    minReasoningEffort: row.minReasoningEffort,
    maxTokens: row.maxTokens,
    contextWindow: row.contextWindow,
    inputPricePer1k: row.inputPricePer1k,
    outputPricePer1k: row.outputPricePer1k,
  };
}
