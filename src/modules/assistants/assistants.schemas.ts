// Wire shapes of assistants: the enums (defined once, shown in the OpenAPI document), the record as
// read, and the bodies of create and update. Field names are the spec's (snake_case where it says so).
import { z } from 'zod';
import { objectId } from '../../platform/http/schemas.js';
import { REASONING_EFFORTS } from '../../ai/registry.js';
import { ASSISTANT_STATUSES, ASSISTANT_TOOL_MODES } from './assistants.tables.js';

export const assistantToolModeSchema = z.enum(ASSISTANT_TOOL_MODES).meta({
  id: 'assistantToolMode',
  description: "How the model may use tools in this assistant's turns: auto (model decides), none (no tools), required (must call one).",
});
export const stsReasoningEffortSchema = z.enum(REASONING_EFFORTS).meta({
  id: 'stsReasoningEffort',
  description: "Reasoning effort in the voice-avatar mode; 'off' turns reasoning off. null: the twin's setting applies.",
});
export const assistantStatusSchema = z.enum(ASSISTANT_STATUSES);
export const ASSISTANT_SCOPES = ['system', 'user', 'institution', 'account'] as const;
export const assistantScopeSchema = z.enum(ASSISTANT_SCOPES).meta({
  id: 'assistantScope',
  description:
    'Who can pick the assistant: system (everyone), user (only its owner: personal, or in a twin without sharing), ' +
    "institution (the twin's members), account (members of every twin of the twin's account).",
});
export type AssistantScope = z.infer<typeof assistantScopeSchema>;

/** A 24-hex id, or '' which removes the field. */
const idOrEmpty = z.union([z.literal(''), objectId]);
const modelName = z.string().trim().max(200);
/** Tool names as GET /api/admin/tools lists them (model-safe names). */
const toolNames = z.array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name as GET /api/admin/tools lists it')).max(100);

const writableFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(5_000),
  instructions: z.string().max(100_000),
  status: assistantStatusSchema,
  argument_1: z.string().max(5_000),
  argument_2: z.string().max(5_000),
  argument_3: z.string().max(5_000),
  argument_4: z.string().max(5_000),
  argument_5: z.string().max(5_000),
  picture_url: z.string().max(2_048),
  admin_only: z.boolean(),
  editable_others: z.boolean(),
  institution_shared: z.boolean(),
  account_shared: z.boolean(),
  ragEnabled: z.boolean(),
  bypassSystemContext: z.boolean(),
  remember_history: z.number().int().min(0).max(1_000),
  user: idOrEmpty.describe('owner; validated and ignored (read-only)'),
  institution: idOrEmpty.describe("twin the assistant is in; '' makes it personal"),
  conversationModel: modelName,
  stsConversationModel: modelName,
  assistantToolMode: assistantToolModeSchema,
  tools: toolNames.nullable().describe('the tools this assistant may use, named as in GET /api/admin/tools; null: every tool the twin enables (the built-ins file_search and memory only when named)'),
  delegates: z.array(objectId).max(20).describe('assistants this one may hand a task to through the delegate tool (pickable in the same twin)'),
  stsReasoningEffort: stsReasoningEffortSchema.nullable(),
};

export const assistantUpdateBody = z.object(writableFields).partial().describe('Any writable assistant fields; unknown keys are ignored');
export type AssistantUpdateInput = z.infer<typeof assistantUpdateBody>;

export const assistantCreateBody = z
  .object(writableFields)
  .partial()
  .required({ name: true })
  .describe('A new assistant; institution omitted means the current twin, an empty string makes it personal');
export type AssistantCreateInput = z.infer<typeof assistantCreateBody>;

export const assistantSchema = z
  .object({
    _id: z.string(),
    name: z.string(),
    description: z.string(),
    instructions: z.string().describe('empty for callers who may not edit the assistant'),
    status: assistantStatusSchema,
    argument_1: z.string(),
    argument_2: z.string(),
    argument_3: z.string(),
    argument_4: z.string(),
    argument_5: z.string(),
    picture_url: z.string(),
    admin_only: z.boolean(),
    editable_others: z.boolean(),
    institution_shared: z.boolean(),
    account_shared: z.boolean(),
    ragEnabled: z.boolean(),
    bypassSystemContext: z.boolean(),
    remember_history: z.number().int(),
    user: z.string().nullable().describe('owner id; null for system assistants'),
    institution: z.string().nullable().describe('twin id; null for personal and system assistants'),
    conversationModel: z.string(),
    stsConversationModel: z.string(),
    assistantToolMode: assistantToolModeSchema,
    tools: z.array(z.string()).nullable(),
    delegates: z.array(z.string()),
    stsReasoningEffort: stsReasoningEffortSchema.nullable(),
    created: z.string(),
    liked_count: z.number().int(),
    scope: assistantScopeSchema,
    standard: z.boolean().describe('true for the standard assistant New Conversation'),
    canEdit: z.boolean().describe('whether the caller may edit it'),
  })
  .describe('Assistant');
export type AssistantWire = z.infer<typeof assistantSchema>;

export const assistantEnvelope = z.object({ success: z.literal(true), data: assistantSchema });
export const assistantListEnvelope = z.object({ success: z.literal(true), data: z.array(assistantSchema) });
export const assistantUpdateResult = z.object({
  success: z.literal(true),
  message: z.string(),
  scope: assistantScopeSchema,
  sharingDropped: z.boolean().describe('true when a sharing value asked for (or held before a move) was not kept'),
});
export const favoritesResult = z.object({ success: z.literal(true), favoriteAssistants: z.array(z.string()) });
