// Wires the users family: the signed-in person's own profile, refreshed from a cache kept true by row
// change notices. app.ts calls this once (the profile service itself is shared with sign-in).
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { App } from '../../platform/http/schemas.js';
import { createProfileCache } from './profile-cache.js';
import type { ProfileService } from './profile.service.js';
import { userRoutes } from './users.routes.js';

export function registerUsers(app: App, deps: { profiles: ProfileService; changes: Pick<ChangeFeed, 'subscribe' | 'caughtUp'> }): void {
  userRoutes(app, deps.profiles, createProfileCache(deps.changes));
}
