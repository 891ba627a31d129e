// /api/auth: sign-in and sign-out.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, messageSchema, type App } from '../../platform/http/schemas.js';
import { profileSchema } from '../users/profile.schemas.js';
import type { AuthService } from './auth.service.js';
import { PASSWORD_RULE } from './passwords.js';

export const signInBody = z.object({
  email: z.email().max(320),
  password: z.string().min(1).max(PASSWORD_RULE.max),
});

export function authRoutes(app: App, auth: AuthService): void {
  app.post(
    '/api/auth/signin',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with email and password',
        description:
          'Returns a JWT valid 24 hours and the profile. A wrong email or password answers 401 with the same ' +
          'message for both; an inactive account answers 403 once the password is right.',
        security: [],
        body: signInBody,
        response: { 200: z.object({ token: z.string(), profile: profileSchema }), ...failures(400, 401, 403, 429) },
      },
    },
    async (request) => auth.signIn(request.body.email, request.body.password, clientInfo(request)),
  );

  app.post(
    '/api/auth/signout',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign out: the session token stops working at once',
        response: { 200: messageSchema, ...failures(401) },
      },
    },
    async (request) => {
      await auth.signOut(actorOf(request));
      return { success: true as const, message: 'Signed out' };
    },
  );
}

export function clientInfo(request: { ip: string; headers: Record<string, unknown> }) {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof agent === 'string' ? agent : '' };
}
