// Second factors and one-time credentials: backup codes, pending two-step sign-ins (and launch-scope
// step-ups), password-reset links and launch tokens. Every code and token is stored hashed and single-use.
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn } from '../../platform/db/columns.js';

export const mfaBackupCodes = pgTable(
  'mfa_backup_codes',
  {
    id: idColumn(),
    userId: refColumn('user_id').notNull(),
    codeHash: text('code_hash').notNull(),
    usedAt: timestampColumn('used_at'),
    createdAt: createdAt(),
  },
  (t) => [index('mfa_backup_codes_user_idx').on(t.userId)],
);

/** A sign-in (or a launch-session step-up) waiting for its second factor; the mfaToken names it. */
export const mfaChallenges = pgTable(
  'mfa_challenges',
  {
    id: idColumn(),
    userId: refColumn('user_id').notNull(),
    purpose: text('purpose', { enum: ['signin', 'launch'] }).notNull(),
    method: text('method', { enum: ['totp', 'email'] }).notNull(),
    /** The launch session being stepped up, and its twin. */
    sessionId: refColumn('session_id'),
    twinId: refColumn('institution_id'),
    codeHash: text('code_hash'),
    codeExpiresAt: timestampColumn('code_expires_at'),
    sends: integer('sends').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: timestampColumn('expires_at').notNull(),
    consumedAt: timestampColumn('consumed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('mfa_challenges_user_idx').on(t.userId), index('mfa_challenges_session_idx').on(t.sessionId)],
);

export const passwordResets = pgTable(
  'password_resets',
  {
    id: idColumn(),
    userId: refColumn('user_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: timestampColumn('expires_at').notNull(),
    usedAt: timestampColumn('used_at'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('password_resets_token_key').on(t.tokenHash), index('password_resets_user_idx').on(t.userId)],
);

/** Launch tokens signed by a twin administrator for one person (POST /api/auth/sdk-sign). */
export const launchTokens = pgTable(
  'launch_tokens',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    email: text('email').notNull(),
    fname: text('fname').notNull().default(''),
    lname: text('lname').notNull().default(''),
    createdBy: refColumn('created_by').notNull(),
    expiresAt: timestampColumn('expires_at').notNull(),
    usedAt: timestampColumn('used_at'),
    createdAt: createdAt(),
  },
  (t) => [index('launch_tokens_institution_idx').on(t.twinId, t.createdAt), uniqueIndex('launch_tokens_token_key').on(t.tokenHash)],
);

export type MfaChallengeRow = typeof mfaChallenges.$inferSelect;
