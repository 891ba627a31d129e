// Shapes custom models field by field: the spec's record for everyone, the admin view with the
// engine's settings. The sealed API key never leaves the server; admins see only apiKeySet.
import type { AdminCustomModelWire, CustomModelWire } from './custom-models.schemas.js';
import type { CustomModelRow } from './custom-models.tables.js';

export function presentCustomModel(row: CustomModelRow): CustomModelWire {
  return {
    _id: row.id,
    name: row.name,
    model: row.model,
    description: row.description,
    provider: row.provider,
    status: row.status,
    maxTokens: row.maxTokens,
    contextWindow: row.contextWindow,
  };
}

export function presentAdminCustomModel(row: CustomModelRow): AdminCustomModelWire {
  return {
    ...presentCustomModel(row),
    institution: row.twinId,
    baseUrl: row.baseUrl,
    apiKeySet: Boolean(row.apiKeySealed),
    minReasoningEffort: row.minReasoningEffort,
    inputPricePer1k: row.inputPricePer1k,
    outputPricePer1k: row.outputPricePer1k,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}
