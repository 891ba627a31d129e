// /api/auth/oauth: third-party sign-in providers, the redirect to one, and its callback.
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { failures, type App } from '../../platform/http/schemas.js';
import { clientInfo } from '../auth/auth.routes.js';
import { mfaRequiredSchema, signedInSchema } from '../auth/auth.schemas.js';
import { BINDING_COOKIE, STATE_TTL_MS, type OAuthService } from './oauth.service.js';

const providerParams = z.object({ provider: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'is not a provider id') });

export function oauthRoutes(app: App, oauth: OAuthService, options: { publicUrl: string; requestsPerMinute: number }): void {
  const rateLimit = { max: options.requestsPerMinute, timeWindow: 60_000 };
  const secure = options.publicUrl.startsWith('https:') ? '; Secure' : '';
  const cookie = (value: string, maxAgeSeconds: number) =>
    `${BINDING_COOKIE}=${value}; Path=/api/auth/oauth; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;

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
          '16). The person is found by the provider\'s issuer and subject; a new subject whose email already has an ' +
          'account answers 409 ACCOUNT_EXISTS (never joined by email alone). A missing, used, expired or foreign ' +
          'state (or a missing browser cookie) answers 400 OAUTH_STATE_INVALID; a code the provider does not ' +
          'confirm answers 401 OAUTH_FAILED.',
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
        response: { 200: z.union([signedInSchema, mfaRequiredSchema]), ...failures(400, 401, 403, 404, 409, 502) },
      },
    },
    async (request, reply) => {
      reply.header('set-cookie', cookie('', 0));
      return oauth.callback(request.params.provider, request.query, readCookie(request, BINDING_COOKIE), clientInfo(request));
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

