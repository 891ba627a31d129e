// The spec's institution object (a Digital Twin as the sign-in profile and the twin routes show it):
// its wire shape and its presenter, field by field.
import { z } from 'zod';
import type { TwinRow } from './twins.tables.js';

export const twinObjectSchema = z
  .object({
    _id: z.string(),
    id: z.string(),
    name: z.string(),
    picture: z.string(),
    picture_bg: z.string(),
    picture_animated: z.string(),
    ainame: z.string(),
    status: z.string(),
    allowJoining: z.string().describe("'closed' (nobody joins uninvited) or 'open'"),
    rtVoice: z.string(),
    questionType: z.string(),
    credits: z.number(),
    creditAward: z.number(),
    maxCompletionTokens: z.number(),
    maxFiles: z.number(),
    creditsTotal: z.number().describe('credits left plus credits used'),
    creditsUsagePct: z.number().describe('share of creditsTotal used, 0..100'),
    joiningAdminOnly: z.boolean(),
    poolCredits: z.boolean(),
    disableFileUploadForUser: z.boolean(),
    personalisationAsked: z.boolean(),
    locationEnabled: z.boolean(),
    rtEnabled: z.boolean(),
    rtAdminOnly: z.boolean(),
    displayAgentDetails: z.boolean(),
    disableAssistantsForUser: z.boolean(),
    publicId: z.string().uuid(),
    publicAuthorizedUrls: z.array(z.string()),
    invoices_urls: z.array(z.string()),
    toolsDisabled: z.array(z.string()),
    ltiContextIds: z.array(z.string()),
    assistantsDisabled: z.array(z.string()),
    contactEmail: z.string(),
  })
  .describe('Institution (Digital Twin) inside the profile');

export type TwinWire = z.infer<typeof twinObjectSchema>;

export function presentTwin(row: TwinRow): TwinWire {
  const creditsTotal = row.credits + row.creditsUsed;
  return {
    _id: row.id,
    id: row.id,
    name: row.name,
    picture: row.picture,
    picture_bg: row.pictureBg,
    picture_animated: row.pictureAnimated,
    ainame: row.ainame,
    status: row.status,
    allowJoining: row.allowJoining,
    rtVoice: row.rtVoice,
    questionType: row.questionType,
    credits: row.credits,
    creditAward: row.creditAward,
    maxCompletionTokens: row.maxCompletionTokens,
    maxFiles: row.maxFiles,
    creditsTotal,
    creditsUsagePct: creditsTotal > 0 ? Math.round((row.creditsUsed / creditsTotal) * 10_000) / 100 : 0,
    joiningAdminOnly: row.joiningAdminOnly,
    poolCredits: row.poolCredits,
    disableFileUploadForUser: row.disableFileUploadForUser,
    personalisationAsked: row.personalisationAsked,
    locationEnabled: row.locationEnabled,
    rtEnabled: row.rtEnabled,
    rtAdminOnly: row.rtAdminOnly,
    displayAgentDetails: row.displayAgentDetails,
    disableAssistantsForUser: row.disableAssistantsForUser,
    publicId: row.publicId,
    publicAuthorizedUrls: row.publicAuthorizedUrls,
    invoices_urls: row.invoicesUrls,
    toolsDisabled: row.toolsDisabled,
    ltiContextIds: row.ltiContextIds,
    assistantsDisabled: row.assistantsDisabled,
    contactEmail: row.contactEmail,
  };
}
