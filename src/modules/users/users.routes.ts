// /api/user: the signed-in person's own profile.
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, type App } from '../../platform/http/schemas.js';
import type { ProfileCache } from './profile-cache.js';
import type { ProfileService } from './profile.service.js';
import { profileSchema } from './profile.schemas.js';

const refreshedSchema = z.object({ success: z.literal(true), profile: profileSchema });

/**
 * Already the schema's JSON: Fastify writes it as it is (no serializer). A string, not bytes: Node sends
 * the head and a string body as one string in one write, where bytes go beside the head in a gathered write.
 */
function sendJson(reply: FastifyReply, body: string): void {
  reply.type('application/json; charset=utf-8').send(body);
}

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
    (request, reply) => {
      const actor = actorOf(request);
      if (cache && !actor.launchScope) {
        // Served as the JSON the schema would have produced: from the cache at once when it holds it
        // (the open tabs' polls: no promise on the way), else filled first.
        const cached = cache.peek(actor.userId);
        if (cached !== undefined) return sendJson(reply, cached);
        return cache
          .get(actor.userId, async () => {
            const { profile, ...dependencies } = await profiles.loadWithDependencies(actor.userId, { populateFavorites: true });
            return { body: JSON.stringify(refreshedSchema.parse({ success: true, profile })), ...dependencies };
          })
          .then((body) => sendJson(reply, body));
      }
      return profiles
        .load(actor.userId, { populateFavorites: true, twinId: actor.launchScope ? actor.launchScope.twinId : undefined })
        .then((profile) => {
          // A launch session holds user rights in its twin only (behaviour 16): show exactly those.
          reply.send({ success: true as const, profile: actor.launchScope ? { ...profile, permissions: actor.permissions } : profile });
        });
    },
  );
}
