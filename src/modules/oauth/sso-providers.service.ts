// Administrators' SSO providers of their current twin: OpenID Connect providers whose sign-ins open
// sessions restricted to that twin (behaviour 16). Needs sso.edit there; another twin's provider is 404.
// The issuer passes the outbound guard when saved, and is an issuer, not its discovery document's URL.
// A move of the issuer to another origin without a new client secret drops the stored one.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { refuseUnlessAllowed, type OutboundPolicy } from '../../platform/net/outbound-guard.js';
import { secretAfterMove, type SecretChange } from '../../platform/net/secret-after-move.js';
import { requireAccess } from '../access/access.js';
import { isDiscoveryUrl } from './oauth.providers.js';
import { deleteSsoProviders, findSsoProvider, insertSsoProvider, listSsoProviders, updateSsoProvider } from './oauth.repo.js';
import { presentSsoProvider, type SsoProviderWire } from './sso-providers.schemas.js';

export interface SsoProviderInput {
  name?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
}

export const ISSUER_IS_DISCOVERY_URL = 'ISSUER_IS_DISCOVERY_URL';

export function createSsoProviderService({ db, secrets, policy }: { db: Database; secrets: SecretBox; policy: OutboundPolicy }) {
  async function twinOf(actor: Actor): Promise<string> {
    if (!actor.twinId) throw new BadRequestError('Choose a twin first: you have no current twin', 'NO_TWIN');
    await requireAccess(db, actor, 'sso.edit', { twin: actor.twinId });
    return actor.twinId;
  }

  async function owned(actor: Actor, id: string) {
    const twin = await twinOf(actor);
    const row = await findSsoProvider(db, id);
    if (!row || row.twinId !== twin) throw new NotFoundError('SSO provider not found');
    return row;
  }

  const seal = (secret?: string) => (secret ? secrets.encrypt(secret) : undefined);
  /** The column's new value: undefined leaves it as it is. */
  const sealed = (change: SecretChange) => (change === 'keep' ? undefined : change === 'remove' ? null : secrets.encrypt(change.set));

  /** An issuer the service may reach, written as the issuer itself (whose discovered metadata must name it). */
  async function checkIssuer(issuer: string): Promise<void> {
    if (isDiscoveryUrl(issuer)) {
      throw new BadRequestError(
        'Give the issuer itself, not the address of its discovery document (without /.well-known/...): the service finds that document and checks that it names this issuer',
        ISSUER_IS_DISCOVERY_URL,
      );
    }
    await refuseUnlessAllowed(policy, issuer);
  }

  return {
    async list(actor: Actor, page: number, limit: number) {
      const { rows, total } = await listSsoProviders(db, await twinOf(actor), page, limit);
      return { data: rows.map(presentSsoProvider), page, limit, total };
    },
    async get(actor: Actor, id: string): Promise<SsoProviderWire> {
      return presentSsoProvider(await owned(actor, id));
    },
    async create(actor: Actor, input: Required<Pick<SsoProviderInput, 'name' | 'issuer' | 'clientId'>> & SsoProviderInput): Promise<SsoProviderWire> {
      const twin = await twinOf(actor);
      await checkIssuer(input.issuer);
      const row = await insertSsoProvider(db, {
        twinId: twin,
        name: input.name,
        issuer: input.issuer,
        clientId: input.clientId,
        clientSecretSealed: seal(input.clientSecret) ?? null,
      });
      return presentSsoProvider(row);
    },
    async update(actor: Actor, id: string, input: SsoProviderInput): Promise<SsoProviderWire> {
      const row = await owned(actor, id);
      if (input.issuer !== undefined) await checkIssuer(input.issuer);
      // An empty or absent secret keeps the stored one, unless the issuer moves to another origin.
      const change = secretAfterMove(row.issuer, input.issuer, input.clientSecret ? { set: input.clientSecret } : 'keep');
      const updated = await updateSsoProvider(db, row.twinId, id, {
        name: input.name,
        issuer: input.issuer,
        clientId: input.clientId,
        clientSecretSealed: sealed(change),
      });
      return presentSsoProvider(updated ?? row);
    },
    async remove(actor: Actor, id: string): Promise<void> {
      const row = await owned(actor, id);
      await deleteSsoProviders(db, row.twinId, [id]);
    },
    /** Providers of other twins are skipped and not counted. */
    async bulkRemove(actor: Actor, ids: string[]): Promise<number> {
      return deleteSsoProviders(db, await twinOf(actor), [...new Set(ids)]);
    },
  };
}

export type SsoProviderService = ReturnType<typeof createSsoProviderService>;
