// Twins (table `institutions`: the spec's word) and memberships: the tenants and who belongs to them with which role.
import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { amount, createdAt, idColumn, refColumn, stringList, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import { REASONING_EFFORTS } from '../../ai/registry.js';

export const MEMORY_MODES = ['off', 'session', 'long_term'] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];

export const twins = pgTable(
  'institutions',
  {
    id: idColumn(),
    name: text('name').notNull(),
    ainame: text('ainame').notNull().default(''),
    picture: text('picture').notNull().default(''),
    pictureBg: text('picture_bg').notNull().default(''),
    pictureAnimated: text('picture_animated').notNull().default(''),
    pictureDarkBg: text('picture_dark_bg').notNull().default(''),
    about: text('about').notNull().default(''),
    voiceAgentId: text('voice_agent_id').notNull().default(''),
    status: text('status', { enum: ['active', 'inactive'] }).notNull().default('active'),
    /** Who may join without an invitation: 'closed' (nobody) or 'open'. */
    allowJoining: text('allow_joining').notNull().default('closed'),
    joiningAdminOnly: boolean('joining_admin_only').notNull().default(false),
    rtVoice: text('rt_voice').notNull().default(''),
    questionType: text('question_type').notNull().default(''),
    credits: amount('credits'),
    creditsUsed: amount('credits_used'),
    creditAward: amount('credit_award'),
    /** Held by turns in progress that the pool pays for: spendable is credits - creditsHeld. */
    creditsHeld: amount('credits_held'),
    poolCredits: boolean('pool_credits').notNull().default(false),
    maxCompletionTokens: integer('max_completion_tokens').notNull().default(4096),
    maxFiles: integer('max_files').notNull().default(100),
    disableFileUploadForUser: boolean('disable_file_upload_for_user').notNull().default(false),
    personalisationAsked: boolean('personalisation_asked').notNull().default(false),
    locationEnabled: boolean('location_enabled').notNull().default(false),
    rtEnabled: boolean('rt_enabled').notNull().default(false),
    rtAdminOnly: boolean('rt_admin_only').notNull().default(false),
    displayAgentDetails: boolean('display_agent_details').notNull().default(false),
    disableAssistantsForUser: boolean('disable_assistants_for_user').notNull().default(false),
    publicId: uuid('public_id').notNull().defaultRandom(),
    publicAuthorizedUrls: stringList('public_authorized_urls'),
    invoicesUrls: stringList('invoices_urls'),
    toolsDisabled: stringList('tools_disabled'),
    ltiContextIds: stringList('lti_context_ids'),
    assistantsDisabled: stringList('assistants_disabled'),
    contactEmail: text('contact_email').notNull().default(''),
    /** Twins of one account can share assistants with each other (account_shared). */
    accountId: refColumn('account_id'),
    /** Provider-token records, `cloudServices.<provider>`, each sealed with the secret box. */
    cloudServices: jsonb('cloud_services').$type<Record<string, { sealed: string; updatedAt: string }>>().notNull().default(sql`'{}'::jsonb`),
    // Settings later features read (docs/decisions.md, "Twins").
    /** Behaviour 8: opt-in instructions applied to every conversation. */
    guardrailsEnabled: boolean('guardrails_enabled').notNull().default(false),
    guardrailsText: text('guardrails_text').notNull().default(''),
    /** Behaviour 6: enabling long-term memory also clears admins-only and sets the default mode. */
    longTermMemoryEnabled: boolean('long_term_memory_enabled').notNull().default(false),
    memoryAdminsOnly: boolean('memory_admins_only').notNull().default(true),
    defaultMemoryMode: text('default_memory_mode', { enum: MEMORY_MODES }).notNull().default('session'),
    /** Behaviour 12: the twin's effort; the engine raises it to the model's minimum, 'off' is respected. */
    reasoningEffort: text('reasoning_effort', { enum: REASONING_EFFORTS }).notNull().default('medium'),
    /** Behaviour 15: conversation turns allowed per 24 hours, per person and for the whole twin; null = unlimited. */
    userDailyLimit: integer('user_daily_limit'),
    twinDailyLimit: integer('twin_daily_limit'),
    /** Behaviour 14: the embedding page may guide live conversations (off by default). */
    embedGuidanceEnabled: boolean('embed_guidance_enabled').notNull().default(false),
    /** Live transcript events for embedding pages (off by default). */
    embedTranscriptEnabled: boolean('embed_transcript_enabled').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    uniqueIndex('institutions_public_id_key').on(t.publicId),
    index('institutions_account_idx').on(t.accountId),
    // No overdraft, whatever path changes the balance.
    check('institutions_credits_nonnegative', sql`${t.credits} >= 0`),
    check('institutions_credits_held_nonnegative', sql`${t.creditsHeld} >= 0`),
  ],
);

export const memberships = pgTable(
  'memberships',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    userId: refColumn('user_id').notNull(),
    role: text('role', { enum: ['user', 'admin'] }).notNull().default('user'),
    /** Grants beyond the role, from the list in permissions.ts. */
    permissions: stringList('permissions'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('memberships_institution_user_key').on(t.twinId, t.userId),
    index('memberships_user_idx').on(t.userId),
  ],
);

export type TwinRow = typeof twins.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
