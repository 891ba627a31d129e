// Signatures of the external voice agent's calls already taken: a signature is good once, and only
// within its 5-minute window, so a row lives until the window closes. In the database, so a signature
// replayed to another process of the service is refused too.
import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { refColumn, timestampColumn } from '../../platform/db/columns.js';

export const voiceAgentSignatures = pgTable(
  'voice_agent_signatures',
  {
    /** The signature's `v1` value (HMAC of its time and body): unique per call. */
    signature: text('signature').primaryKey(),
    /** When its window closes: after that the time check refuses it anyway, and the row may go. */
    expiresAt: timestampColumn('expires_at').notNull(),
  },
  (t) => [index('voice_agent_signatures_expires_idx').on(t.expiresAt)],
);

/**
 * Voice-agent calls that ended (POST /api/ai/rt/voice-agent/ended): a tool request naming one later is
 * refused (409 CALL_ENDED) on any process. Kept for a day after the end, then removed as others end.
 */
export const voiceAgentEndedCalls = pgTable(
  'voice_agent_ended_calls',
  {
    twinId: refColumn('institution_id').notNull(),
    callId: text('call_id').notNull(),
    expiresAt: timestampColumn('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.twinId, t.callId] }), index('voice_agent_ended_calls_expires_idx').on(t.expiresAt)],
);
