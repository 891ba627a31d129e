// People: the account, its sign-in factors and the preferences the profile shows.
// An email is unique among accounts not deleted, so a soft-deleted email can be used again.
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { amount, createdAt, idColumn, refColumn, stringList, timestampColumn, updatedAt } from '../../platform/db/columns.js';

export const ACCOUNT_TYPES = ['user', 'admin', 'super'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export const USER_STATUSES = ['active', 'inactive', 'trialing', 'deleted'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const PLANS = ['free', 'entry', 'premium', 'pro', 'monthly', 'sdk'] as const;
export type Plan = (typeof PLANS)[number];

/** Fields the spec shows from a learning platform (lxp_*), kept as given. */
export interface ExternalProfile {
  customerId?: string;
  lxp_user_id?: string;
  lxp_partner_id?: string;
  lxp_partner_name?: string;
  lxp_role_name?: string;
  lxp_user_type?: number;
  lxp_role_id?: number;
}

export const users = pgTable(
  'users',
  {
    id: idColumn(),
    email: text('email').notNull(),
    passwordHash: text('password_hash'),
    fname: text('fname').notNull().default(''),
    lname: text('lname').notNull().default(''),
    picture: text('picture').notNull().default(''),
    accountType: text('account_type', { enum: ACCOUNT_TYPES }).notNull().default('user'),
    status: text('status', { enum: USER_STATUSES }).notNull().default('active'),
    plan: text('plan', { enum: PLANS }).notNull().default('free'),
    credits: amount('credits'),
    creditsUsed: amount('credits_used'),
    /** Held by turns in progress (their most expensive possible cost): spendable is credits - creditsHeld. */
    creditsHeld: amount('credits_held'),
    currentTwinId: refColumn('current_institution_id'),
    external: jsonb('external').$type<ExternalProfile>().notNull().default(sql`'{}'::jsonb`),
    trialEnd: timestampColumn('trial_end'),
    currentPeriodEnd: timestampColumn('current_period_end'),
    trialUsed: boolean('trial_used').notNull().default(false),
    cancelAtPeriodEnd: boolean('cancel_at_period_end').notNull().default(false),
    referralId: uuid('referral_id').notNull().defaultRandom(),
    resetCodeId: uuid('reset_code_id'),
    referrerPaid: boolean('referrer_paid').notNull().default(false),
    invoicesUrls: stringList('invoices_urls'),
    // Preferences (GET/PUT /api/user/setting).
    useLocation: boolean('use_location').notNull().default(false),
    pinUi: boolean('pin_ui').notNull().default(false),
    darkMode: boolean('dark_mode').notNull().default(false),
    browserVoice: text('browser_voice').notNull().default(''),
    rtVoice: text('rt_voice').notNull().default(''),
    rememberHistoryCount: integer('remember_history_count').notNull().default(10),
    maxDialogues: integer('max_dialogues').notNull().default(0),
    userMemoryEnabled: boolean('user_memory_enabled').notNull().default(true),
    voiceAssistantId: refColumn('voice_assistant_id'),
    favoriteAssistants: stringList('favorite_assistants'),
    // Sign-in factors. Secrets are sealed with the secret box; codes are stored hashed elsewhere.
    mfaEnabled: boolean('mfa_enabled').notNull().default(false),
    mfaMethod: text('mfa_method', { enum: ['totp', 'email'] }),
    mustChangePassword: boolean('must_change_password').notNull().default(false),
    totpSecretSealed: text('totp_secret_sealed'),
    totpPendingSealed: text('totp_pending_sealed'),
    /** Last accepted TOTP time step: a code is accepted once. */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    version: integer('version').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    uniqueIndex('users_email_live_key').on(sql`lower(${t.email})`).where(sql`${t.deletedAt} is null`),
    index('users_current_institution_idx').on(t.currentTwinId),
    // The administration's people list, newest first and paged (GET /api/admin/users): read backwards,
    // this order is the list's (created_at desc, id desc) without a sort of every account.
    index('users_listed_idx').on(t.createdAt, t.id).where(sql`${t.deletedAt} is null`),
    // Its search (a fragment of the email or either name, case-insensitive): trigram indexes answer the
    // ILIKE '%...%' of each column without reading every account (docs/decisions.md, "People search").
    index('users_email_trgm_idx').using('gin', t.email.op('gin_trgm_ops')).with({ fastupdate: false }).where(sql`${t.deletedAt} is null`),
    index('users_fname_trgm_idx').using('gin', t.fname.op('gin_trgm_ops')).with({ fastupdate: false }).where(sql`${t.deletedAt} is null`),
    index('users_lname_trgm_idx').using('gin', t.lname.op('gin_trgm_ops')).with({ fastupdate: false }).where(sql`${t.deletedAt} is null`),
    check('users_credits_nonnegative', sql`${t.credits} >= 0`),
    check('users_credits_held_nonnegative', sql`${t.creditsHeld} >= 0`),
  ],
);

export type UserRow = typeof users.$inferSelect;
