// Builds a person's profile: the account, its current twin and the permissions held there.
import type { Database } from '../../platform/db/client.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { permissionsFor } from '../../platform/http/permissions.js';
import { presentProfile } from './profile.presenter.js';
import type { ProfileDependencies } from './profile-cache.js';
import type { ProfileWire } from './profile.schemas.js';
import { findProfileRows } from './users.repo.js';
import type { UserRow } from './users.tables.js';

/** Later modules fill favorites in (assistant records) without this module knowing their tables. */
export type FavoritesLoader = (user: UserRow) => Promise<unknown[]>;

export interface LoadOptions {
  populateFavorites?: boolean;
  /** The twin the profile is of (a launch session's), instead of the account's current twin. */
  twinId?: string | null;
}

export interface ProfileService {
  load(userId: string, options?: LoadOptions): Promise<ProfileWire>;
  /** The profile with what it was built from beyond the person's rows (for the profile cache). */
  loadWithDependencies(userId: string, options?: LoadOptions): Promise<{ profile: ProfileWire } & ProfileDependencies>;
  setFavoritesLoader(loader: FavoritesLoader): void;
}

export function createProfileService(db: Database): ProfileService {
  let favoritesLoader: FavoritesLoader | undefined;
  return {
    setFavoritesLoader(loader) {
      favoritesLoader = loader;
    },
    async load(userId, options = {}) {
      return (await this.loadWithDependencies(userId, options)).profile;
    },
    async loadWithDependencies(userId, options = {}) {
      const found = await findProfileRows(db, userId, options.twinId);
      if (!found) throw new NotFoundError('User not found');
      const { user, twin, membership, subscriptionConnected } = found;
      // Populated as the profile's twin sees them: a launch session's profile is of its twin, not the account's current one.
      const asIn = options.twinId ? { ...user, currentTwinId: options.twinId } : user;
      const favoriteAssistants = options.populateFavorites && favoritesLoader ? await favoritesLoader(asIn) : undefined;
      const profile = presentProfile({
        user,
        twin: twin ?? null,
        permissions: permissionsFor(user.accountType, membership?.role, membership?.permissions ?? []),
        favoriteAssistants,
        subscriptionConnected,
      });
      return { profile, twinId: twin?.id ?? null, favoriteIds: user.favoriteAssistants };
    },
  };
}
