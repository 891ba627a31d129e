// Signatures of the external voice agent's calls already taken: a signature is good once, and only
// within its 5-minute window, so a row lives until the window closes. In the database, so a signature
// replayed to another process of the service is refused too.
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampColumn } from '../../platform/db/columns.js';

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
