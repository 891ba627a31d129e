// /api/user: the signed-in person's own profile.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import type { ProfileCache } from './profile-cache.js';
import type { ProfileService } from './profile.service.js';
import { profileSchema } from './profile.schemas.js';

const refreshedSchema = z.object({ success: z.literal(true), profile: profileSchema });

export function userRoutes(app: App, profiles: ProfileService, cache?: ProfileCache): void {
  app.post(
    '/api/user/refresh/profile',
    {
      schema: {
        tags: ['user'],
        summary: 'Refresh the profile',
        description: 'The profile as at sign-in, with favoriteAssistants populated. Any body (e.g. {slug, tag}) is accepted and ignored.',
        body: z.object({ slug: z.string().optional(), tag: z.string().optional() }).nullish(),
        response: { 200: refreshedSchema, ...failures(401) },
      },
      // Reads only: no change fence after it (see ChangeFeed).
      config: { readOnly: true },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      if (cache && !actor.launchScope) {
        // Served as the JSON the schema would have produced, from the cache when it can.
        const json = await cache.get(actor.userId, async () => {
          const { profile, ...dependencies } = await profiles.loadWithDependencies(actor.userId, { populateFavorites: true });
          return { json: JSON.stringify(refreshedSchema.parse({ success: true, profile })), ...dependencies };
        });
        // Already the schema's JSON: Fastify sends a string as it is (the cast only quiets the typed reply).
        return reply.type('application/json; charset=utf-8').send(json as unknown as z.infer<typeof refreshedSchema>);
      }
      const profile = await profiles.load(actor.userId, {
        populateFavorites: true,
        twinId: actor.launchScope ? actor.launchScope.twinId : undefined,
      });
      // A launch session holds user rights in its twin only (behaviour 16): show exactly those.
      return { success: true as const, profile: actor.launchScope ? { ...profile, permissions: actor.permissions } : profile };
    },
  );
}
