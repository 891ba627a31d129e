// /api/auth/oauth: third-party sign-in providers, the redirect to one, and its callback.
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { failures, type App } from '../../platform/http/schemas.js';
import { clientInfo } from '../auth/auth.routes.js';
import { mfaRequiredSchema, signedInSchema } from '../auth/auth.schemas.js';
import type { SecretBox } from '../../platform/crypto/secrets.js';
import { answerOf, checkOrigin, HANDOFF_COOKIE, HANDOFF_PAGE, HANDOFF_TTL_MS, isPageLoad, openOutcome, outcomeOf, sealOutcome } from './oauth.handoff.js';
import { BINDING_COOKIE, STATE_TTL_MS, type OAuthService } from './oauth.service.js';

const providerParams = z.object({ provider: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'is not a provider id') });

export interface OAuthRouteOptions {
  publicUrl: string;
  requestsPerMinute: number;
  secrets: SecretBox;
  /** The web client is served: a callback loaded as a page goes on to its /signin/oauth (else it answers JSON, as to a program). */
  pageHandoff: boolean;
}

export function oauthRoutes(app: App, oauth: OAuthService, options: OAuthRouteOptions): void {
  const rateLimit = { max: options.requestsPerMinute, timeWindow: 60_000 };
  const secure = options.publicUrl.startsWith('https:') ? '; Secure' : '';
  const cookieOf = (name: string) => (value: string, maxAgeSeconds: number) =>
    `${name}=${value}; Path=/api/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
  const cookie = cookieOf(BINDING_COOKIE);
  const handoffCookie = cookieOf(HANDOFF_COOKIE);

  app.get(
    '/api/auth/oauth/providers',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['auth'],
        summary: 'Third-party sign-in providers',
        description: "The deployment's providers; with `publicId`, also that twin's own SSO providers (ids are 24 hex characters).",
        security: [],
        querystring: z.object({ publicId: z.uuid().optional() }),
        response: {
          200: z.object({ success: z.literal(true), providers: z.array(z.object({ id: z.string(), name: z.string() })) }),
          ...failures(400),
        },
      },
    },
    async (request) => ({ success: true as const, providers: await oauth.providers(request.query.publicId) }),
  );

  app.get(
    '/api/auth/oauth/:provider',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Start signing in with a provider',
        description:
          'Redirects (302) to the provider (OpenID Connect authorization code with PKCE, state and nonce) and sets ' +
          `an HttpOnly cookie ${BINDING_COOKIE} that ties the request to this browser for 10 minutes. Unknown provider: ` +
          '404; provider unreachable: 502 OAUTH_PROVIDER_UNAVAILABLE.',
        security: [],
        params: providerParams,
        response: { 302: z.null().describe('redirect to the provider'), ...failures(400, 404, 502) },
      },
    },
    async (request, reply) => {
      const { url, binding } = await oauth.start(request.params.provider);
      return reply.header('set-cookie', cookie(binding, STATE_TTL_MS / 1000)).redirect(url, 302);
    },
  );

  app.get(
    '/api/auth/oauth/:provider/callback',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'The provider returns here: signs the person in',
        description:
          'Answers like POST /api/auth/signin: {token, profile}, or {mfaRequired, mfaToken, ...} when the account ' +
          'has two-step verification on. A twin\'s own provider opens a session restricted to that twin (behaviour ' +
          '16). The person is found by this provider record and the issuer\'s subject (the same subject through ' +
          'another twin\'s provider is another identity); a new subject whose email the provider has not confirmed ' +
          '(email_verified not true) answers 403 OAUTH_EMAIL_NOT_VERIFIED, one whose email already has an ' +
          'account 409 ACCOUNT_EXISTS (never joined by email alone). A missing, used, expired or foreign ' +
          'state (or a missing browser cookie) answers 400 OAUTH_STATE_INVALID; a code the provider does not ' +
          'confirm answers 401 OAUTH_FAILED. Loaded as a page (the provider\'s redirect in a browser: ' +
          'Sec-Fetch-Mode navigate, or an Accept naming text/html), it answers 303 to the web client\'s ' +
          `${HANDOFF_PAGE} instead, with the outcome (session, second-factor challenge or failure) sealed in an ` +
          `HttpOnly cookie ${HANDOFF_COOKIE} for ${HANDOFF_TTL_MS / 1000} s, collected by POST /api/auth/oauth/handoff. ` +
          'A deployment that serves no web client (web/dist not built) answers JSON to page loads too.',
        security: [],
        params: providerParams,
        // The provider's answer (RFC 6749 4.1.2, RFC 9207's iss); any other parameter it adds is passed on as sent.
        querystring: z
          .object({
            code: z.string().optional(),
            state: z.string().optional(),
            iss: z.string().optional(),
            error: z.string().optional(),
            error_description: z.string().optional(),
          })
          .catchall(z.string()),
        response: {
          200: z.union([signedInSchema, mfaRequiredSchema]),
          303: z.null().describe(`loaded as a page: on to ${HANDOFF_PAGE}`),
          ...failures(400, 401, 403, 404, 409, 502),
        },
      },
    },
    async (request, reply) => {
      const signIn = oauth.callback(request.params.provider, request.query, readCookie(request, BINDING_COOKIE), clientInfo(request));
      if (!options.pageHandoff || !isPageLoad(request)) {
        reply.header('set-cookie', cookie('', 0));
        return signIn;
      }
      const sealed = sealOutcome(options.secrets, await outcomeOf(signIn));
      reply.header('set-cookie', [cookie('', 0), handoffCookie(sealed, HANDOFF_TTL_MS / 1000)]);
      return reply.redirect(HANDOFF_PAGE, 303);
    },
  );

  app.post(
    '/api/auth/oauth/handoff',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: "Collect a browser's provider sign-in (the web client's /signin/oauth)",
        description:
          `Reads and clears the ${HANDOFF_COOKIE} cookie the callback set when loaded as a page. Answers {success, token} ` +
          '(the profile: POST /api/user/refresh/profile), or the second-factor challenge as POST /api/auth/signin does, ' +
          'or the failure the callback met, with its status and code. Collected already, expired, altered or missing: ' +
          '400 OAUTH_HANDOFF_INVALID. A request whose Origin is not the service\'s own: 403 OAUTH_HANDOFF_ORIGIN.',
        security: [],
        body: z.object({}).nullish(),
        response: {
          200: z.union([z.object({ success: z.literal(true), token: z.string() }), mfaRequiredSchema]),
          ...failures(400, 401, 403, 404, 409, 502),
        },
      },
    },
    async (request, reply) => {
      checkOrigin(request, options.publicUrl);
      reply.header('set-cookie', handoffCookie('', 0));
      return answerOf(openOutcome(options.secrets, readCookie(request, HANDOFF_COOKIE)));
    },
  );
}

function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=') || undefined;
  }
  return undefined;
}

