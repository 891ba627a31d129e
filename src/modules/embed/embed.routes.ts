// POST /api/agent/embed/session: the session of a page that embeds a twin (no token; checked by origin).
import { failures, type App } from '../../platform/http/schemas.js';
import { clientInfo } from '../auth/auth.routes.js';
import { embedSessionBody, embedSessionResponse } from './embed.schemas.js';
import type { EmbedService } from './embed.service.js';

export function embedRoutes(app: App, embed: EmbedService, options: { sessionsPerHour: number }): void {
  app.post(
    '/api/agent/embed/session',
    {
      // Every request counts against its address, refused ones too: probing origins costs the same.
      config: { auth: 'none', rateLimit: { max: options.sessionsPerHour, timeWindow: 3_600_000 } },
      schema: {
        tags: ['embed'],
        summary: 'Open the session of a page that embeds a twin',
        description:
          'No token. The request\'s `Origin` must be one of the twin\'s `publicAuthorizedUrls` (compared as origins: ' +
          'scheme, host, port); otherwise, with no `Origin`, or with an empty list, 403 ORIGIN_NOT_ALLOWED. An unknown ' +
          'or inactive `publicId` answers 404. Without `launchToken`: `{success: true, token, visitor: true}`, a new ' +
          'visitor of that twin (its own visitor id each time), limited to the conversation routes, the assistants ' +
          'list, branding and its own history (403 VISITOR_SCOPE elsewhere); its turns count under the twin\'s caps ' +
          'and are paid from its pooled credits. With a `launchToken` of that twin: the launch session ' +
          'POST /api/auth/sdk-verify opens, `{success: true, token, visitor: false, profile, launchScope: true}`; a ' +
          'token of another twin answers 403 LAUNCH_TOKEN_OTHER_TWIN (and stays unused), a used, expired or unknown ' +
          'one 401 INVALID_LAUNCH_TOKEN. An address opening more than EMBED_SESSIONS_PER_HOUR (default 30) an hour ' +
          'gets 429.\n\nThe Origin check is not authentication: a browser sends the page\'s true origin, but any ' +
          'other client can send any `Origin`, so a visitor session is what anyone may get. To sign its own people ' +
          'in, a site mints a launch token on its own backend (POST /api/auth/sdk-sign, with a twin administrator\'s ' +
          'token kept on that backend) and hands it to its page, which passes it here as `launchToken`.',
        security: [],
        body: embedSessionBody,
        response: { 200: embedSessionResponse, ...failures(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const origin = request.headers.origin;
      const session = await embed.openSession({ ...request.body, origin }, clientInfo(request));
      return session.visitor
        ? { success: true as const, token: session.token, visitor: true as const }
        : { success: true as const, token: session.token, visitor: false as const, profile: session.profile, launchScope: true as const };
    },
  );
}
