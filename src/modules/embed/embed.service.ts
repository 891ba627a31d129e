// Embed sessions: a page on one of a twin's authorized origins opens a visitor session of that twin,
// or, with a launch token its own backend minted for that twin, a launch session for its person.
// The Origin check keeps other sites' pages out of a browser; it authenticates no one.
import type { Database } from '../../platform/db/client.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import type { AuthService, ClientInfo } from '../auth/auth.service.js';
import type { LaunchService } from '../auth/launch.service.js';
import type { ProfileWire } from '../users/profile.schemas.js';
import { findTwinByPublicId } from '../twins/twins.repo.js';

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
      if (!twin || twin.status !== 'active') throw new NotFoundError('Digital Twin not found');
      if (!isAuthorizedOrigin(input.origin, twin.publicAuthorizedUrls)) {
        throw new ForbiddenError('This page may not embed this Digital Twin', 'ORIGIN_NOT_ALLOWED');
      }
      if (input.launchToken) {
        const signedIn = await launch.verify(input.launchToken, client, { twinId: twin.id });
        return { token: signedIn.token, visitor: false, profile: signedIn.profile };
      }
      const { token } = await auth.openVisitorSession(twin.id, client);
      return { token, visitor: true };
    },
  };
}

export type EmbedService = ReturnType<typeof createEmbedService>;
