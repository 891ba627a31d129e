// The institution's stored provider token, `cloudServices.idp` (sealed): stored when a twin connects
// its identity provider, and revoked by an institution editor. Revoking always removes the local
// record; the revoke at the provider is best effort and its failure never changes the answer.
import { eq, sql } from 'drizzle-orm';
import * as client from 'openid-client';
import type { Config } from '../../config.js';
import type { Database, Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { AppError } from '../../platform/http/errors.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Outbound } from '../../platform/net/outbound.js';
import { findTwinById } from '../twins/twins.repo.js';
import { twins } from '../twins/twins.tables.js';
import { requireAccess } from '../access/access.js';
import { providerConfiguration, resolveProvider } from './oauth.providers.js';

/** The `<provider>` key of the spec's identity-provider segment (`idp`). */
export const IDP_PROVIDER_KEY = 'idp';
const REVOKE_TIMEOUT_MS = 5_000;

export interface StoredProviderToken {
  /** Id of the deployment provider (OIDC_PROVIDERS) that issued the token. */
  providerId: string;
  accessToken: string;
  refreshToken?: string;
}

/** Seals and stores the twin's provider token under cloudServices.<key>. */
export async function storeTwinProviderToken(
  db: Executor,
  secrets: SecretBox,
  twinId: string,
  token: StoredProviderToken,
  key = IDP_PROVIDER_KEY,
): Promise<void> {
  const record = { sealed: secrets.encrypt(JSON.stringify(token)), updatedAt: new Date().toISOString() };
  await db
    .update(twins)
    .set({ cloudServices: sql`${twins.cloudServices} || ${JSON.stringify({ [key]: record })}::jsonb` })
    .where(eq(twins.id, twinId));
}

export interface RevokeDeps {
  db: Database;
  secrets: SecretBox;
  config: Pick<Config, 'oidcProviders'>;
  /** The outbound guard a twin's provider is reached through. */
  outbound: Outbound;
  log: (error: unknown, message: string) => void;
}

export function createIdpRevokeService({ db, secrets, config, outbound, log }: RevokeDeps) {
  async function revokeUpstream(sealed: string): Promise<void> {
    const stored = JSON.parse(secrets.decrypt(sealed)) as StoredProviderToken;
    const provider = await resolveProvider(db, secrets, config.oidcProviders, stored.providerId);
    if (!provider) throw new Error(`provider ${stored.providerId} is not configured`);
    const configuration = await providerConfiguration(provider, outbound);
    await client.tokenRevocation(configuration, stored.accessToken, { token_type_hint: 'access_token' });
    if (stored.refreshToken) await client.tokenRevocation(configuration, stored.refreshToken, { token_type_hint: 'refresh_token' });
  }

  return {
    /** Returns whether a stored token was found (and removed). */
    async revoke(actor: Actor, twinId: string): Promise<boolean> {
      const twin = await findTwinById(db, twinId);
      await requireAccess(db, actor, 'twin.revoke', { twin });
      const record = twin!.cloudServices[IDP_PROVIDER_KEY];
      try {
        await db
          .update(twins)
          .set({ cloudServices: sql`${twins.cloudServices} - ${IDP_PROVIDER_KEY}::text` })
          .where(eq(twins.id, twinId));
      } catch (error) {
        log(error, 'removing the stored provider token failed');
        throw new AppError(500, 'Failed to revoke institution access', 'REVOKE_FAILED');
      }
      if (!record) return false;
      // Best effort, bounded in time: the local removal above already took effect.
      await Promise.race([
        revokeUpstream(record.sealed).catch((error: unknown) => log(error, 'revoking the token at the provider failed')),
        new Promise((resolve) => setTimeout(resolve, REVOKE_TIMEOUT_MS).unref()),
      ]);
      return true;
    },
  };
}

export type IdpRevokeService = ReturnType<typeof createIdpRevokeService>;
