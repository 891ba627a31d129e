// Favorite assistants: ids on the person's account, appended and removed atomically. Adding is
// idempotent (an id already present returns the list unchanged and writes nothing); only an assistant
// the caller could pick may be added. On profile refresh favorites are populated as records, keeping
// only those the person may still pick.
import { eq, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError, NotFoundError } from '../../platform/http/errors.js';
import type { FavoritesLoader } from '../users/profile.service.js';
import { findUserById } from '../users/users.repo.js';
import { users } from '../users/users.tables.js';
import { ASSISTANT_NOT_FOUND } from '../access/access.js';
import { findPickableAssistant } from './assistants.repo.js';
import type { AssistantService } from './assistants.service.js';
import { pickContextForActor, pickContextForUser } from './scope.js';

export const MAX_FAVORITES = 200;

async function currentFavorites(db: Executor, userId: string): Promise<string[]> {
  const user = await findUserById(db, userId);
  if (!user) throw new NotFoundError('User not found');
  return user.favoriteAssistants;
}

export function createFavoritesService(db: Database, assistantsService: Pick<AssistantService, 'pickableByIds'>) {
  return {
    async add(actor: Actor, assistantId: string): Promise<string[]> {
      const present = await currentFavorites(db, actor.userId);
      if (present.includes(assistantId)) return present;
      const ctx = await pickContextForActor(db, actor);
      if (!(await findPickableAssistant(db, ctx, assistantId))) throw new NotFoundError(ASSISTANT_NOT_FOUND, 'ASSISTANT_NOT_FOUND');
      if (present.length >= MAX_FAVORITES) {
        throw new BadRequestError(`At most ${MAX_FAVORITES} favorite assistants`, 'TOO_MANY_FAVORITES');
      }
      // Appended in the database, and only when absent, so two concurrent adds keep one copy.
      const [row] = await db
        .update(users)
        .set({ favoriteAssistants: sql`${users.favoriteAssistants} || jsonb_build_array(${assistantId}::text)` })
        .where(sql`${users.id} = ${actor.userId} and not (${users.favoriteAssistants} @> jsonb_build_array(${assistantId}::text))`)
        .returning({ favoriteAssistants: users.favoriteAssistants });
      return row?.favoriteAssistants ?? currentFavorites(db, actor.userId);
    },

    async remove(actor: Actor, assistantId: string): Promise<string[]> {
      const present = await currentFavorites(db, actor.userId);
      if (!present.includes(assistantId)) return present;
      const [row] = await db
        .update(users)
        .set({ favoriteAssistants: sql`${users.favoriteAssistants} - ${assistantId}::text` })
        .where(eq(users.id, actor.userId))
        .returning({ favoriteAssistants: users.favoriteAssistants });
      return row.favoriteAssistants;
    },

    /** Registered with the profile service: favorites as assistant records. */
    loader: (async (user) => {
      if (user.favoriteAssistants.length === 0) return [];
      const ctx = await pickContextForUser(db, user);
      return assistantsService.pickableByIds(ctx, user.favoriteAssistants);
    }) satisfies FavoritesLoader,
  };
}

export type FavoritesService = ReturnType<typeof createFavoritesService>;
