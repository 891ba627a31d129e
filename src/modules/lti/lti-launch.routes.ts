// POST /api/lti/login (also GET) and POST /api/lti/launch: a course page opens a twin (LTI 1.3). Both
// take form posts (application/x-www-form-urlencoded), as platforms send them, and JSON.
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { failures, type App } from '../../platform/http/schemas.js';
import { clientInfo } from '../auth/auth.routes.js';
import type { LtiLaunchService } from './lti-launch.service.js';
import { sendLaunchPage } from './lti-page.js';

const tags = ['lti'];
const FORM_LIMIT = 64 * 1024;
/** Per address per minute: each login keeps a row for a while; a class behind one address launches together. */
const PER_MINUTE = 300;

const loginParams = z.object({
  iss: z.string().min(1).max(2000).describe("the platform's issuer"),
  login_hint: z.string().min(1).max(4000),
  target_link_uri: z.string().min(1).max(2000).describe('where the platform means to land (the launch always opens the chat)'),
  lti_message_hint: z.string().max(4000).optional(),
  client_id: z.string().min(1).max(500).optional(),
  lti_deployment_id: z.string().min(1).max(255).optional(),
});
const launchBody = z.object({
  id_token: z.string().min(1).max(32_000),
  state: z.string().min(1).max(500),
});

const LOGIN =
  'Third-party initiated login (LTI 1.3). The platform is found by `iss` (and `client_id`, `lti_deployment_id` when ' +
  "given); none registered answers 401 LTI_UNKNOWN_DEPLOYMENT. Answers 302 to the platform's authLoginUrl with the " +
  'OIDC authentication request (response_type=id_token, response_mode=form_post, scope=openid, prompt=none, a new ' +
  'state and nonce, redirect_uri the launch URL). The state and nonce are kept by the service, single use for 5 ' +
  'minutes: no cookie, so a launch works in a browser that blocks third-party cookies.';
const LAUNCH =
  "The platform's form post of the id_token and state. Checked: the state (single use), the signature (RS256, the " +
  "platform's JWKS, fetched again for an unknown key id at most once every 5 seconds), iss, aud/azp, exp, iat, the " +
  'nonce (single use), a registered deployment_id, and the course: the context id must be in the `ltiContextIds` ' +
  "of the platform's twin. Refusals answer 401: LTI_BAD_TOKEN, LTI_REPLAY (a used state or nonce), " +
  'LTI_UNKNOWN_DEPLOYMENT, LTI_UNKNOWN_CONTEXT. The person is the one bound to the platform\'s subject before, or ' +
  'found by the email claim: a new account joins the twin as a user; an existing account only when already a member ' +
  '(else 409 ACCOUNT_EXISTS). Success: an HTML page (frameable by the origins of the twin\'s registered platforms) that ' +
  'hands a launch session (user rights in that twin until the code step-up, behaviour 16) to the web client.';

export function ltiLaunchRoutes(app: App, service: LtiLaunchService): void {
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    const typed = scope.withTypeProvider<ZodTypeProvider>();
    const login = async (params: z.infer<typeof loginParams>) => service.login(params);

    typed.post(
      '/api/lti/login',
      {
        config: { auth: 'none', rateLimit: { max: PER_MINUTE, timeWindow: 60_000 } },
        schema: { tags, summary: 'Start an LTI 1.3 launch (login initiation)', description: LOGIN, security: [], body: loginParams, response: { ...failures(400, 401, 429) } },
      },
      async (request, reply) => reply.redirect(await login(request.body), 302),
    );
    typed.get(
      '/api/lti/login',
      {
        config: { auth: 'none', rateLimit: { max: PER_MINUTE, timeWindow: 60_000 } },
        schema: { tags, summary: 'Start an LTI 1.3 launch (login initiation, by GET)', description: LOGIN, security: [], querystring: loginParams, response: { ...failures(400, 401, 429) } },
      },
      async (request, reply) => reply.redirect(await login(request.query), 302),
    );
    typed.post(
      '/api/lti/launch',
      {
        config: { auth: 'none', rateLimit: { max: PER_MINUTE, timeWindow: 60_000 } },
        schema: {
          tags,
          summary: 'Complete an LTI 1.3 launch (the redirect URI)',
          description: LAUNCH,
          security: [],
          body: launchBody,
          produces: ['text/html'],
          response: { 200: z.string().describe('the HTML page that opens the chat'), ...failures(400, 401, 403, 409, 429, 502) },
        },
      },
      async (request, reply) => {
        const launched = await service.launch(request.body, clientInfo(request));
        return sendLaunchPage(reply, { token: launched.token, frameOrigins: launched.frameOrigins, twinName: launched.twin.name, chatPath: `/lti/${launched.twin.publicId}` });
      },
    );
  });
}
