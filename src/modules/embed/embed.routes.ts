// POST /api/agent/embed/session: the session of a page that embeds a twin (no token; checked by origin).
// POST /api/agent/embed/guide: that page's guidance for the session's next turn (behaviour 14).
import { isVisitor } from '../../platform/http/actor.js';
import { callerOf } from '../../platform/http/auth-guard.js';
import { ForbiddenError } from '../../platform/http/errors.js';
import { failures, type App } from '../../platform/http/schemas.js';
import { clientInfo } from '../auth/auth.routes.js';
import { embedGuideBody, embedGuideResponse, embedSessionBody, embedSessionResponse } from './embed.schemas.js';
import { EMBED_MESSAGES, type EmbedService } from './embed.service.js';

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

  app.post(
    '/api/agent/embed/guide',
    {
      config: { visitors: true },
      schema: {
        tags: ['embed'],
        summary: "Guide the embed session's next answer",
        description:
          "With the token of an embed session (a visitor's, or a launch session's) and the embedding page's `Origin` " +
          '(embed.js sends it from the page itself, so the browser sets it): the text steers the next answer of that ' +
          "session's conversation and is kept on its history record as `guidance: [{text, at}]`, never as the person's " +
          'words; that turn is billed like any other. Checked on every message: an `Origin` not in the twin\'s ' +
          'publicAuthorizedUrls (or none) answers 403 ORIGIN_NOT_ALLOWED, then `embedGuidanceEnabled` off answers 403 ' +
          "GUIDANCE_OFF (the turn checks the switch again). A person's full session answers 403 EMBED_SESSION_REQUIRED.",
        body: embedGuideBody,
        response: { 200: embedGuideResponse, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const session = isVisitor(caller)
        ? { twinId: caller.twinId, sessionId: caller.sessionId }
        : caller.launchScope
          ? { twinId: caller.launchScope.twinId, sessionId: caller.sessionId }
          : null;
      if (!session) throw new ForbiddenError(EMBED_MESSAGES.embedSessionOnly, 'EMBED_SESSION_REQUIRED');
      await embed.guide({ ...session, text: request.body.text, origin: request.headers.origin });
      return { success: true as const };
    },
  );
}
