// LTI 1.3 login and launch (IMS Security Framework, LTI Core). The login (third-party initiated) keeps
// its state and nonce on the service, single use for 5 minutes, and sends the browser to the platform's
// authorization endpoint; the launch claims the state, checks the id_token (RS256 with the platform's
// keys, iss, aud/azp, exp/iat, the nonce, a registered deployment) and opens a launch session (behaviour
// 16) in the platform's twin when that twin lists the course. No cookie is involved at any step.
import { decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Database } from '../../platform/db/client.js';
import { withTransaction } from '../../platform/db/client.js';
import { hashToken, randomToken } from '../../platform/crypto/hash.js';
import { AppError, ConflictError, ForbiddenError, UnauthorizedError } from '../../platform/http/errors.js';
import { insertAccount } from '../credits/starting-credits.js';
import { findIdentity, insertIdentity } from '../oauth/oauth.repo.js';
import { findMembership, findTwinById, insertMembership } from '../twins/twins.repo.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { findUserByEmail, findUserById, updateUser } from '../users/users.repo.js';
import type { UserRow } from '../users/users.tables.js';
import type { AuthService, ClientInfo, SignedIn } from '../auth/auth.service.js';
import { lxpProfile, readLaunchClaims, type LaunchClaims } from './lti-claims.js';
import type { PlatformKeys } from './lti-keys.js';
import { frameOriginsOf } from './lti-chat-page.js';
import { claimLoginState, deleteExpiredLoginStates, findLoginState, insertLoginState, platformsByIssuer } from './lti.repo.js';
import type { LtiPlatformRow } from './lti.tables.js';

export const LOGIN_STATE_TTL_MS = 5 * 60_000;
/** How long a used or expired state is remembered, to answer a replay as one. */
const STATE_MEMORY_MS = 24 * 60 * 60_000;
const TOKEN_MAX_AGE = '10m';
const CLOCK_TOLERANCE_S = 60;

const refuse = (code: string, message: string) => new UnauthorizedError(message, code);
const badToken = (why: string) => refuse('LTI_BAD_TOKEN', `This course launch is not valid: ${why}`);
const replay = () => refuse('LTI_REPLAY', 'This course launch was already used; open the link in the course again');
const unknownDeployment = () => refuse('LTI_UNKNOWN_DEPLOYMENT', 'This platform or deployment is not registered with any Digital Twin');
const unknownContext = () => refuse('LTI_UNKNOWN_CONTEXT', 'This course is not linked to a Digital Twin of this platform');

export interface LoginRequest {
  iss: string;
  login_hint: string;
  target_link_uri: string;
  lti_message_hint?: string;
  client_id?: string;
  lti_deployment_id?: string;
}

export interface Launched extends SignedIn {
  twin: TwinRow;
  /** Origins allowed to frame the launch page: those of the twin's registered platforms. */
  frameOrigins: string[];
}

export function createLtiLaunchService(deps: { db: Database; auth: AuthService; keys: PlatformKeys; launchUrl: string; startingCredits: number }) {
  const { db, auth, keys } = deps;

  /** The registrations a login names: by issuer, client id and deployment when the platform gives them. */
  async function registrationsFor(request: LoginRequest): Promise<LtiPlatformRow[]> {
    const rows = await platformsByIssuer(db, request.iss, request.client_id);
    const deployment = request.lti_deployment_id;
    return deployment ? rows.filter((row) => row.deploymentIds.includes(deployment)) : rows;
  }

  /** Verifies the signature with the keys of each registration's JWKS URL: the registrations whose keys signed it, and the payload. */
  async function verifySignature(token: string, candidates: LtiPlatformRow[], issuer: string, clientId: string) {
    let payload: JWTPayload | undefined;
    let failure: unknown;
    const verified: LtiPlatformRow[] = [];
    for (const jwksUrl of new Set(candidates.map((row) => row.jwksUrl))) {
      try {
        const result = await jwtVerify(token, keys.of(jwksUrl), {
          algorithms: ['RS256'],
          issuer,
          audience: clientId,
          requiredClaims: ['exp', 'iat', 'sub', 'nonce'],
          maxTokenAge: TOKEN_MAX_AGE,
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        payload = result.payload;
        verified.push(...candidates.filter((row) => row.jwksUrl === jwksUrl));
      } catch (error) {
        failure ??= error;
        if (!(error instanceof joseErrors.JOSEError)) failure = error;
      }
    }
    if (payload) return { payload, verified };
    throw explain(failure);
  }

  function explain(error: unknown): Error {
    if (error instanceof joseErrors.JWTExpired) return badToken('it has expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed) return badToken(`the ${error.claim} claim is wrong (${error.reason})`);
    if (error instanceof joseErrors.JWKSNoMatchingKey) return badToken("it is signed with a key the platform's key set does not hold");
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) return badToken('its signature does not match');
    if (error instanceof joseErrors.JOSEAlgNotAllowed) return badToken('it must be signed with RS256');
    if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid || !(error instanceof joseErrors.JOSEError)) {
      return new AppError(502, "The platform's keys could not be read; try again later", 'LTI_PLATFORM_UNAVAILABLE', undefined, String(error));
    }
    return badToken('it could not be verified');
  }

  /** aud holds the client id (jose checked); with several audiences, azp must name it, and when present always. */
  function checkAuthorizedParty(payload: JWTPayload, clientId: string): void {
    const several = Array.isArray(payload.aud) && payload.aud.length > 1;
    if ((several || payload.azp !== undefined) && payload.azp !== clientId) throw badToken('the azp claim does not name this tool');
  }

  async function checkNonce(payload: JWTPayload, expectedHash: string): Promise<void> {
    const nonceHash = hashToken(String(payload.nonce));
    if (nonceHash === expectedHash) return;
    if ((await findLoginState(db, { nonceHash }))?.usedAt) throw replay();
    throw badToken('its nonce is not the one this login sent');
  }

  function checkMessage(claims: LaunchClaims): void {
    if (claims.messageType !== 'LtiResourceLinkRequest') throw badToken('only resource link launches are supported');
    if (claims.version !== '1.3.0') throw badToken('the LTI version must be 1.3.0');
    if (!claims.subject) throw badToken('it names no person (sub)');
  }

  /** The registration whose deployment is listed and whose twin (active) lists the course. */
  async function placeOf(verified: LtiPlatformRow[], claims: LaunchClaims): Promise<{ platform: LtiPlatformRow; twin: TwinRow }> {
    const deployed = verified.filter((row) => claims.deploymentId !== undefined && row.deploymentIds.includes(claims.deploymentId));
    if (deployed.length === 0) throw unknownDeployment();
    if (!claims.contextId) throw unknownContext();
    for (const platform of deployed) {
      const twin = await findTwinById(db, platform.twinId);
      if (twin && twin.status === 'active' && !twin.deletedAt && twin.ltiContextIds.includes(claims.contextId)) return { platform, twin };
    }
    throw unknownContext();
  }

  /**
   * The person: bound before through this registration (re-added to its twin as a user when they left), or
   * by email: a new account joins the twin as a user; an existing one is taken only when it is already a
   * member of the twin (a platform never brings an outside account into its twin).
   */
  async function personFor(platform: LtiPlatformRow, twin: TwinRow, claims: LaunchClaims): Promise<UserRow> {
    return withTransaction(db, async (tx) => {
      const bound = await findIdentity(tx, platform.id, platform.issuer, claims.subject);
      let user = bound ? await findUserById(tx, bound.userId) : undefined;
      if (!user) {
        if (!claims.email) throw badToken('it does not share the person\'s email address (the platform\'s privacy settings for this tool)');
        user = await findUserByEmail(tx, claims.email);
        if (user && !(await findMembership(tx, user.id, twin.id))) {
          throw new ConflictError(
            'An account with this email exists and is not a member of this Digital Twin; an administrator of the twin adds it, then the course opens it',
            'ACCOUNT_EXISTS',
          );
        }
        user ??= await insertAccount(tx, { email: claims.email, fname: claims.givenName, lname: claims.familyName, currentTwinId: twin.id }, deps.startingCredits);
        await insertIdentity(tx, { userId: user.id, provider: platform.id, issuer: platform.issuer, subject: claims.subject });
      }
      if (user.status === 'inactive' || user.status === 'deleted') throw new ForbiddenError('This account is inactive', 'ACCOUNT_INACTIVE');
      if (!(await findMembership(tx, user.id, twin.id))) await insertMembership(tx, { twinId: twin.id, userId: user.id, role: 'user' });
      return (await updateUser(tx, user.id, { external: { ...user.external, ...lxpProfile(claims, platform.issuer) } })) ?? user;
    });
  }

  return {
    /** The platform's authorization URL for this login; the state and nonce are kept here. */
    async login(request: LoginRequest): Promise<string> {
      const [registration] = await registrationsFor(request);
      if (!registration) throw unknownDeployment();
      const now = Date.now();
      await deleteExpiredLoginStates(db, new Date(now - STATE_MEMORY_MS));
      const state = randomToken(32);
      const nonce = randomToken(32);
      await insertLoginState(db, {
        stateHash: hashToken(state),
        nonceHash: hashToken(nonce),
        issuer: registration.issuer,
        clientId: registration.clientId,
        expiresAt: new Date(now + LOGIN_STATE_TTL_MS),
      });
      const url = new URL(registration.authLoginUrl);
      const params: Record<string, string | undefined> = {
        scope: 'openid',
        response_type: 'id_token',
        response_mode: 'form_post',
        prompt: 'none',
        client_id: registration.clientId,
        redirect_uri: deps.launchUrl,
        login_hint: request.login_hint,
        lti_message_hint: request.lti_message_hint,
        state,
        nonce,
      };
      for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
      return url.href;
    },

    async launch(input: { id_token: string; state: string }, client: ClientInfo): Promise<Launched> {
      const stateHash = hashToken(input.state);
      const state = await claimLoginState(db, stateHash, new Date());
      if (!state) {
        if ((await findLoginState(db, { stateHash }))?.usedAt) throw replay();
        throw badToken('its login is unknown or expired; open the link in the course again');
      }
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(input.id_token);
      } catch {
        throw badToken('the id_token is not a JWT');
      }
      if (unverified.iss !== state.issuer) throw badToken('the iss claim is not the platform this login went to');
      const candidates = await platformsByIssuer(db, state.issuer, state.clientId);
      if (candidates.length === 0) throw unknownDeployment();
      const { payload, verified } = await verifySignature(input.id_token, candidates, state.issuer, state.clientId);
      checkAuthorizedParty(payload, state.clientId);
      await checkNonce(payload, state.nonceHash);
      const claims = readLaunchClaims(payload);
      checkMessage(claims);
      const { platform, twin } = await placeOf(verified, claims);
      const user = await personFor(platform, twin, claims);
      const session = await auth.openSession(user, client, { kind: 'launch', twinId: twin.id });
      return { ...session, twin, frameOrigins: await frameOriginsOf(db, twin.id) };
    },
  };
}

export type LtiLaunchService = ReturnType<typeof createLtiLaunchService>;
