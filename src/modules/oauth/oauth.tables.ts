// Third-party sign-in: identities bound by provider record + issuer + subject, in-flight authorization requests
// (state, nonce, PKCE verifier, browser binding), and the per-twin SSO providers administrators configure.
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, idColumn, refColumn, timestampColumn, updatedAt } from '../../platform/db/columns.js';

export const oidcIdentities = pgTable(
  'oidc_identities',
  {
    id: idColumn(),
    userId: refColumn('user_id').notNull(),
    /**
     * The provider record the identity was made through: a deployment provider's id, or a twin SSO
     * provider's id. The same issuer + subject through another record is another identity. Null only
     * on rows made before identities had a provider (migration 0019): see adoptLegacyIdentity.
     */
    provider: text('provider'),
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('oidc_identities_provider_issuer_subject_key').on(t.provider, t.issuer, t.subject),
    index('oidc_identities_user_idx').on(t.userId),
  ],
);

export const oauthStates = pgTable(
  'oauth_states',
  {
    id: idColumn(),
    /** Deployment provider id, or the id of a twin's SSO provider. */
    provider: text('provider').notNull(),
    stateHash: text('state_hash').notNull(),
    /** Hash of the cookie value that binds the request to the browser that started it. */
    bindingHash: text('binding_hash').notNull(),
    nonce: text('nonce').notNull(),
    codeVerifier: text('code_verifier').notNull(),
    expiresAt: timestampColumn('expires_at').notNull(),
    consumedAt: timestampColumn('consumed_at'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('oauth_states_state_key').on(t.stateHash)],
);

export const ssoProviders = pgTable(
  'sso_providers',
  {
    id: idColumn(),
    twinId: refColumn('institution_id').notNull(),
    name: text('name').notNull(),
    issuer: text('issuer').notNull(),
    clientId: text('client_id').notNull(),
    clientSecretSealed: text('client_secret_sealed'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('sso_providers_institution_idx').on(t.twinId, t.createdAt)],
);

export type SsoProviderRow = typeof ssoProviders.$inferSelect;
