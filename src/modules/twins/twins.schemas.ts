// Wire shapes of twin administration: the institution object of the spec plus its settings and
// branding, the writable fields, list query and bulk actions.
import { z } from 'zod';
import { paginationQuery } from '../../platform/http/schemas.js';
import { twinObjectSchema } from './twin-object.js';
import { REASONING_EFFORTS } from '../../ai/registry.js';
import { MEMORY_MODES } from './twins.tables.js';

const url = z.string().trim().max(2048);
const list = (max = 200) => z.array(z.string().trim().min(1).max(500)).max(max);
const dailyLimit = z.number().int().min(0).max(10_000_000).nullable();

export const adminTwinSchema = twinObjectSchema
  .extend({
    creditsUsed: z.number(),
    about: z.string(),
    picture_dark_bg: z.string(),
    voice_agent_id: z.string(),
    accountId: z.string().nullable(),
    guardrailsEnabled: z.boolean(),
    guardrailsText: z.string(),
    longTermMemoryEnabled: z.boolean(),
    memoryAdminsOnly: z.boolean(),
    defaultMemoryMode: z.enum(MEMORY_MODES),
    reasoningEffort: z.enum(REASONING_EFFORTS),
    userDailyLimit: dailyLimit.describe('conversation turns per person per 24 hours; null = unlimited'),
    twinDailyLimit: dailyLimit.describe('conversation turns for the whole twin per 24 hours; null = unlimited'),
    embedGuidanceEnabled: z.boolean().describe('the embedding page may guide live conversations (behaviour 14)'),
    liveTranscriptEnabled: z.boolean().describe("the embedding page receives the live conversation's transcript events (twin:transcript)"),
    cloudServices: z.array(z.string()).describe('providers with a stored token (the token itself is never shown)'),
    created: z.string(),
    updated: z.string(),
  })
  .describe('A Digital Twin as administrators see it');
export type AdminTwinWire = z.infer<typeof adminTwinSchema>;

/** Fields a twin's administrators (institutions.edit) may change. */
export const editTwinBody = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  ainame: z.string().trim().max(200).optional(),
  picture: url.optional(),
  picture_bg: url.optional(),
  picture_animated: url.optional(),
  picture_dark_bg: url.optional(),
  about: z.string().max(20_000).optional(),
  voice_agent_id: z.string().trim().max(200).optional(),
  status: z.enum(['active', 'inactive']).optional(),
  allowJoining: z.enum(['open', 'closed']).optional(),
  joiningAdminOnly: z.boolean().optional(),
  rtVoice: z.string().max(200).optional(),
  questionType: z.string().max(200).optional(),
  maxCompletionTokens: z.number().int().min(1).max(1_000_000).optional(),
  maxFiles: z.number().int().min(0).max(1_000_000).optional(),
  poolCredits: z.boolean().optional(),
  disableFileUploadForUser: z.boolean().optional(),
  personalisationAsked: z.boolean().optional(),
  locationEnabled: z.boolean().optional(),
  rtEnabled: z.boolean().optional(),
  rtAdminOnly: z.boolean().optional(),
  displayAgentDetails: z.boolean().optional(),
  disableAssistantsForUser: z.boolean().optional(),
  publicAuthorizedUrls: list().optional(),
  toolsDisabled: list().optional(),
  ltiContextIds: list(1000).optional(),
  assistantsDisabled: list(1000).optional(),
  contactEmail: z.union([z.email().max(320), z.literal('')]).optional(),
  guardrailsEnabled: z.boolean().optional(),
  guardrailsText: z.string().max(20_000).optional(),
  longTermMemoryEnabled: z.boolean().optional(),
  memoryAdminsOnly: z.boolean().optional(),
  defaultMemoryMode: z.enum(MEMORY_MODES).optional(),
  reasoningEffort: z.enum(REASONING_EFFORTS).optional(),
  userDailyLimit: dailyLimit.optional(),
  twinDailyLimit: dailyLimit.optional(),
  embedGuidanceEnabled: z.boolean().optional(),
  liveTranscriptEnabled: z.boolean().optional(),
  /** Super admins only: group twins of one account (assistant sharing across them). */
  accountId: z.string().regex(/^[0-9a-f]{24}$/).nullable().optional(),
});
export type EditTwinInput = z.infer<typeof editTwinBody>;

export const createTwinBody = editTwinBody.extend({ name: z.string().trim().min(1).max(200) });

export const listTwinsQuery = paginationQuery.extend({ status: z.enum(['active', 'inactive']).optional() });

export const twinResult = z.object({
  success: z.literal(true),
  message: z.string().optional(),
  data: adminTwinSchema,
  ignoredFields: z.array(z.string()).optional(),
});
