// /api/user: the signed-in person's own profile.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import type { ProfileService } from './profile.service.js';
import { profileSchema } from './profile.schemas.js';

export function userRoutes(app: App, profiles: ProfileService): void {
  app.post(
    '/api/user/refresh/profile',
    {
      schema: {
        tags: ['user'],
        summary: 'Refresh the profile',
        description: 'The profile as at sign-in, with favoriteAssistants populated. Any body (e.g. {slug, tag}) is accepted and ignored.',
        body: z.object({ slug: z.string().optional(), tag: z.string().optional() }).nullish(),
        response: { 200: z.object({ success: z.literal(true), profile: profileSchema }), ...failures(401) },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      const profile = await profiles.load(actor.userId, {
        populateFavorites: true,
        institutionId: actor.launchScope ? actor.launchScope.institutionId : undefined,
      });
      // A launch session holds user rights in its twin only (behaviour 16): show exactly those.
      return { success: true as const, profile: actor.launchScope ? { ...profile, permissions: actor.permissions } : profile };
    },
  );
}
