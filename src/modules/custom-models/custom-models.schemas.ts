// Wire shapes of custom AI models: the spec's record (what people see), the admin view (adds the
// engine's settings; the API key only as apiKeySet), and the admin bodies.
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';
import { REASONING_EFFORTS } from '../../ai/registry.js';
import { MODEL_PROVIDERS, MODEL_STATUSES } from './custom-models.tables.js';

export const customModelSchema = z
  .object({
    _id: z.string(),
    name: z.string(),
    model: z.string(),
    description: z.string(),
    provider: z.enum(MODEL_PROVIDERS),
    status: z.enum(MODEL_STATUSES),
    maxTokens: z.number().int(),
    contextWindow: z.number().int(),
  })
  .describe('Custom AI model');
export type CustomModelWire = z.infer<typeof customModelSchema>;

export const adminCustomModelSchema = customModelSchema
  .extend({
    institution: z.string().nullable().describe('twin id; null for a deployment-wide model'),
    baseUrl: z.string(),
    apiKeySet: z.boolean().describe('whether an API key is stored; the key itself is never shown'),
    minReasoningEffort: z.enum(REASONING_EFFORTS).nullable(),
    inputPricePer1k: z.number().describe('credits per 1,000 input tokens'),
    outputPricePer1k: z.number().describe('credits per 1,000 output tokens'),
    created: z.string(),
    updated: z.string(),
  })
  .describe('Custom AI model (admin view)');
export type AdminCustomModelWire = z.infer<typeof adminCustomModelSchema>;

const baseUrl = z.union([z.literal(''), z.url({ protocol: /^https?$/ }).max(2_048)]);
const price = z.number().min(0).max(1_000_000);

export const customModelCreateBody = z.object({
  name: z.string().trim().min(1).max(200),
  model: z.string().trim().min(1).max(200),
  description: z.string().max(2_000).optional(),
  provider: z.enum(MODEL_PROVIDERS).optional(),
  status: z.enum(MODEL_STATUSES).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  contextWindow: z.number().int().min(1).max(10_000_000).optional(),
  baseUrl: baseUrl.optional(),
  apiKey: z.string().max(4_096).optional().describe('stored encrypted, never shown back'),
  minReasoningEffort: z.enum(REASONING_EFFORTS).nullable().optional(),
  inputPricePer1k: price.optional(),
  outputPricePer1k: price.optional(),
  institution: objectId.nullable().optional().describe('omitted: the current twin; null: deployment-wide (super admins only)'),
});
export type CustomModelCreateInput = z.infer<typeof customModelCreateBody>;

export const customModelUpdateBody = customModelCreateBody
  .omit({ institution: true })
  .partial()
  .extend({ clearApiKey: z.boolean().optional().describe('true removes the stored key; an empty or missing apiKey keeps it') });
export type CustomModelUpdateInput = z.infer<typeof customModelUpdateBody>;

export const adminModelsQuery = paginationQuery.extend({ institution: objectId.optional() });
export type AdminModelsQuery = z.infer<typeof adminModelsQuery>;
