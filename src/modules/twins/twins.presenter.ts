// Shapes a twin for administrators: the spec's institution object plus settings and branding.
import { presentTwin } from './twin-object.js';
import type { TwinRow } from './twins.tables.js';
import type { AdminTwinWire } from './twins.schemas.js';

export function presentAdminTwin(row: TwinRow): AdminTwinWire {
  return {
    ...presentTwin(row),
    creditsUsed: row.creditsUsed,
    about: row.about,
    picture_dark_bg: row.pictureDarkBg,
    voice_agent_id: row.voiceAgentId,
    accountId: row.accountId,
    guardrailsEnabled: row.guardrailsEnabled,
    guardrailsText: row.guardrailsText,
    longTermMemoryEnabled: row.longTermMemoryEnabled,
    memoryAdminsOnly: row.memoryAdminsOnly,
    defaultMemoryMode: row.defaultMemoryMode,
    reasoningEffort: row.reasoningEffort,
    userDailyLimit: row.userDailyLimit,
    twinDailyLimit: row.twinDailyLimit,
    embedGuidanceEnabled: row.embedGuidanceEnabled,
    liveTranscriptEnabled: row.embedTranscriptEnabled,
    cloudServices: Object.keys(row.cloudServices),
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
  };
}
