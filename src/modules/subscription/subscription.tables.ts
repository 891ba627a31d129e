// A twin's chat-subscription connection: at most one row per twin, holding the pending device sign-in
// (RFC 8628) and the connection's tokens. Every credential (device code, access and refresh tokens,
// the account) is sealed with the deployment's SecretBox; none of it ever leaves the server.
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { refColumn, timestampColumn, updatedAt } from '../../platform/db/columns.js';
import { twins } from '../twins/twins.tables.js';

export const subscriptionConnections = pgTable('subscription_connections', {
  twinId: refColumn('institution_id')
    .primaryKey()
    .references(() => twins.id, { onDelete: 'cascade' }),
  /** The pending sign-in (all null when none): the device code, when it expires, how often to ask. */
  pendingDeviceCodeSealed: text('pending_device_code_sealed'),
  pendingExpiresAt: timestampColumn('pending_expires_at'),
  /** Seconds between polls; raised by 5 on each slow_down. */
  pendingIntervalSeconds: integer('pending_interval_seconds'),
  /** No poll reaches the provider before this time (the interval, claimed by one poll at a time). */
  pendingNextPollAt: timestampColumn('pending_next_poll_at'),
  pendingStartedBy: refColumn('pending_started_by'),
  /** The connection (all null when not connected). */
  accessTokenSealed: text('access_token_sealed'),
  refreshTokenSealed: text('refresh_token_sealed'),
  /** When the access token expires (null: the provider did not say). */
  tokenExpiresAt: timestampColumn('token_expires_at'),
  /** The provider's account the tokens belong to (its subject), sealed. */
  accountSealed: text('account_sealed'),
  connectedAt: timestampColumn('connected_at'),
  connectedBy: refColumn('connected_by'),
  /** Set when a refresh was refused: the connection is not usable until connected again. */
  refreshFailedAt: timestampColumn('refresh_failed_at'),
  /** Bumped on every token change, so racing refreshes on several processes keep only one result. */
  tokenVersion: integer('token_version').notNull().default(0),
  updatedAt: updatedAt(),
});

export type SubscriptionConnectionRow = typeof subscriptionConnections.$inferSelect;
