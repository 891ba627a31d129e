// LTI 1.3 platforms (course platforms such as Moodle or Canvas) registered per twin by its admins, and
// the login requests in flight: the state and nonce of each third-party initiated login, kept by the
// service (single use, short expiry) so that a launch needs no cookie.
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, stringList, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

export const ltiPlatforms = pgTable(
  'lti_platforms',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull().references(() => twins.id),
    /** The platform's `iss`: an identifier, compared exactly. */
    issuer: text('issuer').notNull(),
    /** The tool's client id at the platform: the id_token's `aud`. */
    clientId: text('client_id').notNull(),
    authLoginUrl: text('auth_login_url').notNull(),
    jwksUrl: text('jwks_url').notNull(),
    deploymentIds: stringList('deployment_ids'),
    createdBy: refColumn('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('lti_platforms_institution_issuer_client_key').on(t.twinId, t.issuer, t.clientId),
    index('lti_platforms_issuer_client_idx').on(t.issuer, t.clientId),
  ],
);

export type LtiPlatformRow = typeof ltiPlatforms.$inferSelect;

export const ltiLoginStates = pgTable(
  'lti_login_states',
  {
    id: idColumn(),
    stateHash: text('state_hash').notNull(),
    nonceHash: text('nonce_hash').notNull(),
    issuer: text('issuer').notNull(),
    clientId: text('client_id').notNull(),
    expiresAt: timestampColumn('expires_at').notNull(),
    usedAt: timestampColumn('used_at'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('lti_login_states_state_key').on(t.stateHash),
    uniqueIndex('lti_login_states_nonce_key').on(t.nonceHash),
    index('lti_login_states_expires_idx').on(t.expiresAt),
  ],
);

export type LtiLoginStateRow = typeof ltiLoginStates.$inferSelect;
