// Custom AI models an administrator makes available: per twin (institution_id) or deployment-wide
// (institution_id null, super admins only). The API key is sealed with the secret box and never shown.
import { sql } from 'drizzle-orm';
import { index, integer, numeric, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, updatedAt } from '../../platform/db/columns.js';
import { REASONING_EFFORTS } from '../../ai/registry.js';

export const MODEL_PROVIDERS = ['openai', 'openai-compatible'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];
export const MODEL_STATUSES = ['active', 'inactive'] as const;

/** Prices in credits per 1,000 tokens: exact decimals, read as numbers. */
const price = (name: string) => numeric(name, { precision: 18, scale: 6, mode: 'number' }).notNull().default(0);

export const customModels = pgTable(
  'custom_models',
  {
    id: idColumn(),
    twinId: refColumn('institution_id'),
    /** What people pick and assistants name in conversationModel. */
    name: text('name').notNull(),
    /** The provider's model id sent to the endpoint. */
    model: text('model').notNull(),
    description: text('description').notNull().default(''),
    provider: text('provider', { enum: MODEL_PROVIDERS }).notNull().default('openai'),
    status: text('status', { enum: MODEL_STATUSES }).notNull().default('active'),
    maxTokens: integer('max_tokens').notNull().default(4096),
    contextWindow: integer('context_window').notNull().default(128000),
    baseUrl: text('base_url').notNull().default(''),
    apiKeySealed: text('api_key_sealed'),
    minReasoningEffort: text('min_reasoning_effort', { enum: REASONING_EFFORTS }),
    inputPricePer1k: price('input_price_per_1k'),
    outputPricePer1k: price('output_price_per_1k'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('custom_models_institution_name_key').on(t.twinId, sql`lower(${t.name})`),
    uniqueIndex('custom_models_global_name_key').on(sql`lower(${t.name})`).where(sql`${t.twinId} is null`),
    index('custom_models_institution_status_idx').on(t.twinId, t.status),
  ],
);

export type CustomModelRow = typeof customModels.$inferSelect;
export type NewCustomModel = typeof customModels.$inferInsert;
