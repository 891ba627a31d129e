// Embed sessions: a page on one of a twin's authorized origins opens a visitor session of that twin,
// or, with a launch token its own backend minted for that twin, a launch session for its person.
// The Origin check keeps other sites' pages out of a browser; it authenticates no one.
import type { Database } from '../../platform/db/client.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import type { AuthService, ClientInfo } from '../auth/auth.service.js';
import type { LaunchService } from '../auth/launch.service.js';
import type { ProfileWire } from '../users/profile.schemas.js';
import { findTwinById, findTwinByPublicId } from '../twins/twins.repo.js';
import { addGuidance } from './guidance.repo.js';

export interface EmbedDeps {
  db: Database;
  auth: AuthService;
  launch: LaunchService;
}

export interface EmbedRequest {
  publicId: string;
  launchToken?: string;
  /** The request's Origin header, as sent (absent from non-browser clients and same-origin GETs). */
  origin?: string;
}

/** Who sends guidance: an embed session (a visitor's, or a launch session), by its twin and session. */
export interface GuideRequest {
  twinId: string;
  sessionId: string;
  text: string;
  origin?: string;
}

export const EMBED_MESSAGES = {
  notFound: 'Digital Twin not found',
  originRefused: 'This page may not embed this Digital Twin',
  guidanceOff: 'Guidance is turned off for this Digital Twin',
  embedSessionOnly: "Guidance is sent with an embed session's token (a visitor's or a launch session's)",
} as const;

export type EmbedSession = { token: string; visitor: true } | { token: string; visitor: false; profile: ProfileWire };

/** The origin (scheme, host, port) of a URL, or null when it is not an http(s) URL. */
export function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** Whether `origin` is one of the authorized URLs' origins; an empty list allows none. */
export function isAuthorizedOrigin(origin: string | undefined, authorizedUrls: readonly string[]): boolean {
  const caller = origin ? originOf(origin) : null;
  if (!caller) return false;
  return authorizedUrls.some((url) => originOf(url) === caller);
}

export function createEmbedService({ db, auth, launch }: EmbedDeps) {
  return {
    async openSession(input: EmbedRequest, client: ClientInfo): Promise<EmbedSession> {
      const twin = await findTwinByPublicId(db, input.publicId);
      if (!twin || twin.status !== 'active') throw new NotFoundError(EMBED_MESSAGES.notFound);
      if (!isAuthorizedOrigin(input.origin, twin.publicAuthorizedUrls)) {
        throw new ForbiddenError(EMBED_MESSAGES.originRefused, 'ORIGIN_NOT_ALLOWED');
      }
      if (input.launchToken) {
        const signedIn = await launch.verify(input.launchToken, client, { twinId: twin.id });
        return { token: signedIn.token, visitor: false, profile: signedIn.profile };
      }
      const { token } = await auth.openVisitorSession(twin.id, client);
      return { token, visitor: true };
    },

    /**
     * Behaviour 14: guidance for the session's next turn. Checked on every message, origin first (another
     * site's page learns nothing of the twin's settings), then the switch; the turn checks the switch again.
     */
    async guide(input: GuideRequest): Promise<void> {
      const twin = await findTwinById(db, input.twinId);
      if (!twin || twin.status !== 'active') throw new NotFoundError(EMBED_MESSAGES.notFound);
      if (!isAuthorizedOrigin(input.origin, twin.publicAuthorizedUrls)) {
        throw new ForbiddenError(EMBED_MESSAGES.originRefused, 'ORIGIN_NOT_ALLOWED');
      }
      if (!twin.embedGuidanceEnabled) throw new ForbiddenError(EMBED_MESSAGES.guidanceOff, 'GUIDANCE_OFF');
      await addGuidance(db, { twinId: twin.id, sessionId: input.sessionId, text: input.text });
    },
  };
}

export type EmbedService = ReturnType<typeof createEmbedService>;
