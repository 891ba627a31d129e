// Third-party sign-in with OpenID Connect: authorization code + PKCE + state + nonce, the request
// bound to the browser that started it by a cookie, and each state usable once. A person is found by
// the provider record + the issuer's subject, never by email alone: the same subject through another
// twin's provider record is another identity. A new account needs the provider's email_verified: true.
// A deployment provider signs people in like a password (then the second factor when on); a twin's own
// provider opens a launch session in that twin.
import * as client from 'openid-client';
import type { Config } from '../../config.js';
import type { Database } from '../../platform/db/client.js';
import { withTransaction } from '../../platform/db/client.js';
import { AppError, BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../platform/http/errors.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { Outbound } from '../../platform/net/outbound.js';
import { hashToken, randomToken, safeEqual } from '../../platform/crypto/hash.js';
import { findTwinByPublicId } from '../twins/twins.repo.js';
import { findMembership, insertMembership } from '../twins/twins.repo.js';
import { findUserByEmail, findUserById } from '../users/users.repo.js';
import { insertAccount } from '../credits/starting-credits.js';
import type { UserRow } from '../users/users.tables.js';
import type { AuthService, ClientInfo, SignedIn } from '../auth/auth.service.js';
import type { MfaRequired, SignInService } from '../auth/signin.service.js';
import { consumeState, countSsoProviders, findIdentity, findLegacyIdentity, insertIdentity, insertState, listSsoProviders } from './oauth.repo.js';
import { providerConfiguration, resolveProvider, type ResolvedProvider } from './oauth.providers.js';

export const STATE_TTL_MS = 10 * 60 * 1000;
export const BINDING_COOKIE = 'dt_oauth';

export interface OAuthServiceDeps {
  db: Database;
  config: Config;
  secrets: SecretBox;
  auth: AuthService;
  signin: SignInService;
  /** The outbound guard a twin's provider is reached through (oauth.providers.ts). */
  outbound: Outbound;
  log?: (error: unknown, message: string) => void;
}

const badState = () => new BadRequestError('This sign-in request is invalid, used or expired; start again', 'OAUTH_STATE_INVALID');
const unknownProvider = () => new NotFoundError('Unknown sign-in provider', 'OAUTH_PROVIDER_NOT_FOUND');

export function createOAuthService({ db, config, secrets, auth, signin, outbound, log }: OAuthServiceDeps) {
  const redirectUri = (key: string) => `${config.publicUrl}/api/auth/oauth/${key}/callback`;

  async function provider(key: string): Promise<ResolvedProvider> {
    return (await resolveProvider(db, secrets, config.oidcProviders, key)) ?? Promise.reject(unknownProvider());
  }

  async function discover(found: ResolvedProvider): Promise<client.Configuration> {
    try {
      return await providerConfiguration(found, outbound);
    } catch (error) {
      log?.(error, 'identity provider discovery failed');
      throw new AppError(502, 'The sign-in provider is not reachable; try again later', 'OAUTH_PROVIDER_UNAVAILABLE');
    }
  }

  /**
   * An identity made before identities had a provider record (migration 0019), taken up by this record
   * when it may vouch for the person: a deployment provider (the operator's own), or a twin's provider
   * of a twin the person already belongs to (so it gains no one). The binding is written for this record;
   * the old row stays for the other records that may take it up. Through any other record: not found.
   */
  async function adoptLegacyIdentity(found: ResolvedProvider, claims: client.IDToken): Promise<string | undefined> {
    const legacy = await findLegacyIdentity(db, claims.iss, claims.sub);
    if (!legacy) return undefined;
    if (found.twinId && !(await findMembership(db, legacy.userId, found.twinId))) return undefined;
    await insertIdentity(db, { userId: legacy.userId, provider: found.key, issuer: claims.iss, subject: claims.sub });
    return legacy.userId;
  }

  /** The person behind the subject through this provider record: bound before, or new. An email already in use is not taken over. */
  async function personFor(found: ResolvedProvider, claims: client.IDToken): Promise<UserRow> {
    const boundId = (await findIdentity(db, found.key, claims.iss, claims.sub))?.userId ?? (await adoptLegacyIdentity(found, claims));
    if (boundId) {
      const user = await findUserById(db, boundId);
      if (!user) throw new ForbiddenError('This account is inactive', 'ACCOUNT_INACTIVE');
      return user;
    }
    const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : '';
    if (!email) throw new BadRequestError('The sign-in provider did not share an email address', 'OAUTH_NO_EMAIL');
    // Anyone who runs a provider can claim any address: an account is made only for one it has confirmed.
    if (claims.email_verified !== true) {
      throw new ForbiddenError(
        'The sign-in provider has not confirmed this email address; confirm it there, or sign up with a password',
        'OAUTH_EMAIL_NOT_VERIFIED',
      );
    }
    return withTransaction(db, async (tx) => {
      if (await findUserByEmail(tx, email)) {
        throw new ConflictError(
          'An account with this email already exists; sign in with its password. Accounts are never joined by email alone.',
          'ACCOUNT_EXISTS',
        );
      }
      const user = await insertAccount(
        tx,
        {
          email,
          fname: typeof claims.given_name === 'string' ? claims.given_name : '',
          lname: typeof claims.family_name === 'string' ? claims.family_name : '',
          currentTwinId: found.twinId,
        },
        config.billing.startingCredits,
      );
      await insertIdentity(tx, { userId: user.id, provider: found.key, issuer: claims.iss, subject: claims.sub });
      return user;
    });
  }

  return {
    /** Deployment providers, plus the twin's own when its publicId is given. */
    async providers(publicId?: string): Promise<{ id: string; name: string }[]> {
      const list = config.oidcProviders.map(({ id, name }) => ({ id, name }));
      if (publicId) {
        const twin = await findTwinByPublicId(db, publicId);
        if (twin) list.push(...(await listSsoProviders(db, twin.id)).rows.map((row) => ({ id: row.id, name: row.name })));
      }
      return list;
    },

    /** The provider's authorization URL and the cookie value that binds the request to this browser. */
    async start(key: string): Promise<{ url: string; binding: string }> {
      const found = await provider(key);
      const configuration = await discover(found);
      const state = client.randomState();
      const nonce = client.randomNonce();
      const codeVerifier = client.randomPKCECodeVerifier();
      const binding = randomToken(24);
      await insertState(db, {
        provider: key,
        stateHash: hashToken(state),
        bindingHash: hashToken(binding),
        nonce,
        codeVerifier,
        expiresAt: new Date(Date.now() + STATE_TTL_MS),
      });
      const url = client.buildAuthorizationUrl(configuration, {
        redirect_uri: redirectUri(key),
        scope: 'openid email profile',
        response_type: 'code',
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, binding };
    },

    async callback(key: string, query: Record<string, string>, binding: string | undefined, info: ClientInfo): Promise<SignedIn | MfaRequired> {
      const found = await provider(key);
      const state = query.state;
      if (!state || !binding) throw badState();
      const pending = await consumeState(db, hashToken(state));
      if (!pending || pending.provider !== key || !safeEqual(hashToken(binding), pending.bindingHash)) throw badState();
      const configuration = await discover(found);
      const currentUrl = new URL(redirectUri(key));
      for (const [name, value] of Object.entries(query)) currentUrl.searchParams.set(name, value);
      let claims: client.IDToken | undefined;
      try {
        const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
        // Many providers put profile claims in userinfo only, not in the ID token. The email and whether
        // it is verified are taken together, from the one source that gives both.
        if (claims && (typeof claims.email !== 'string' || typeof claims.email_verified !== 'boolean')) {
          const info = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
          const pair = typeof info.email === 'string' ? info : claims;
          claims = {
            ...info,
            ...claims,
            email: pair.email,
            email_verified: pair.email_verified,
            given_name: claims.given_name ?? info.given_name,
            family_name: claims.family_name ?? info.family_name,
          };
        }
      } catch (error) {
        log?.(error, 'identity provider sign-in failed');
      }
      if (!claims) throw new UnauthorizedError('The sign-in provider did not confirm the sign-in', 'OAUTH_FAILED');
      const user = await personFor(found, claims);
      if (user.status === 'inactive' || user.status === 'deleted') throw new ForbiddenError('This account is inactive', 'ACCOUNT_INACTIVE');
      if (!found.twinId) return signin.afterFirstFactor(user, info);
      // A twin's own provider vouches for its people in that twin only (behaviour 16).
      if (!(await findMembership(db, user.id, found.twinId))) {
        await insertMembership(db, { twinId: found.twinId, userId: user.id, role: 'user' });
      }
      return auth.openSession(user, info, { kind: 'launch', twinId: found.twinId });
    },
  };
}

/**
 * The branding record's identity-provider flag: true only when a provider is configured for the
 * deployment, or the twin has one of its own. Only a boolean: never the provider's identifier.
 */
export async function hasIdentityProvider(db: Database, config: Pick<Config, 'oidcProviders'>, twinId?: string): Promise<boolean> {
  if (config.oidcProviders.length > 0) return true;
  return twinId ? (await countSsoProviders(db, twinId)) > 0 : false;
}

export type OAuthService = ReturnType<typeof createOAuthService>;
