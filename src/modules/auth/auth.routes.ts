// /api/auth: sign-in (with a second factor when on), codes, sign-out, forgotten passwords and
// launch tokens. Every route here is throttled per address; failures also per account.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, messageSchema, type App } from '../../platform/http/schemas.js';
import { profileSchema } from '../users/profile.schemas.js';
import type { AuthService } from './auth.service.js';
import {
  forgotPasswordBody,
  mfaRequiredSchema,
  mfaResendBody,
  mfaVerifyBody,
  resetPasswordBody,
  sdkSignBody,
  sdkVerifyBody,
  signedInSchema,
  signInBody,
} from './auth.schemas.js';
import type { LaunchService } from './launch.service.js';
import { FORGOT_MESSAGE, type PasswordService } from './password.service.js';
import type { SignInService } from './signin.service.js';

export { signInBody };

export interface AuthRouteDeps {
  auth: AuthService;
  signin: SignInService;
  passwords: PasswordService;
  launch: LaunchService;
  /** Requests per minute per address on these routes. */
  requestsPerMinute: number;
}

export function authRoutes(app: App, { auth, signin, passwords, launch, requestsPerMinute }: AuthRouteDeps): void {
  const rateLimit = { max: requestsPerMinute, timeWindow: 60_000 };

  app.post(
    '/api/auth/signin',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with email and password',
        description:
          'Without a second factor: a JWT valid 24 hours and the profile. With two-step verification on: ' +
          '{success, mfaRequired: true, mfaToken, mfaMethod, methods} and no session; with mfaMethod email a ' +
          '6-digit code has been mailed (valid 10 minutes). A wrong email or password answers 401 with the same ' +
          'message for both; an inactive account answers 403 once the password is right. Repeated failures ' +
          'per account or per address answer 429 RATE_LIMITED for 15 minutes.',
        security: [],
        body: signInBody,
        response: { 200: z.union([signedInSchema, mfaRequiredSchema]), ...failures(400, 401, 403, 429) },
      },
    },
    async (request) => signin.signIn(request.body.email, request.body.password, clientInfo(request)),
  );

  app.post(
    '/api/auth/mfa-verify',
    {
      config: { auth: 'optional', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Complete a sign-in (or a launch-session step-up) with a code',
        description:
          'Accepts a TOTP code, an emailed code or a backup code (`method`, default: the method the sign-in is on). ' +
          'A TOTP code is accepted once; emailed codes expire after 10 minutes; backup codes work once. A wrong code ' +
          'answers 400 INVALID_CODE (CODE_EXPIRED for an expired emailed code); after 5 wrong codes the pending ' +
          'sign-in ends and answers 401 MFA_EXPIRED. With a launch session token and no mfaToken, completes that ' +
          "session's step-up and returns a full session in the same twin (the launch token stops working).",
        security: [],
        body: mfaVerifyBody,
        response: { 200: signedInSchema, ...failures(400, 401, 429) },
      },
    },
    async (request) => signin.verify(request.body, request.actor, clientInfo(request)),
  );

  app.post(
    '/api/auth/mfa-resend',
    {
      config: { auth: 'optional', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Mail a fresh code and switch the pending sign-in to email',
        description:
          'The previous emailed code stops working. At most 5 codes per pending sign-in (then 429). With a launch ' +
          'session token and no mfaToken, resends the code of that session\'s step-up.',
        security: [],
        body: mfaResendBody,
        response: { 200: messageSchema, ...failures(400, 401, 429) },
      },
    },
    async (request) => {
      await signin.resend(request.body?.mfaToken, request.actor);
      return { success: true as const, message: 'A new code has been sent to your email' };
    },
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

  app.post(
    '/api/auth/forgot-password',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Mail a link to reset the password',
        description:
          'Answers the same whether or not the email has an account. The link works once and expires in one hour. ' +
          'More than 10 requests per email or per address in 15 minutes answer 429.',
        security: [],
        body: forgotPasswordBody,
        response: { 200: messageSchema, ...failures(400, 429) },
      },
    },
    async (request) => {
      await passwords.forgot(request.body.email, clientInfo(request));
      return { success: true as const, message: FORGOT_MESSAGE };
    },
  );

  app.post(
    '/api/auth/reset-password',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Set a new password with the mailed link',
        description:
          'Clears mustChangePassword and revokes every session of the person. An unknown, used or expired link ' +
          'answers 400 INVALID_RESET_TOKEN.',
        security: [],
        body: resetPasswordBody,
        response: { 200: messageSchema, ...failures(400, 429) },
      },
    },
    async (request) => {
      await passwords.reset(request.body.token, request.body.password);
      return { success: true as const, message: 'Password changed; sign in with the new password' };
    },
  );

  app.post(
    '/api/auth/sdk-sign',
    {
      config: { rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Sign a launch token for one person (twin administrator)',
        description:
          'A single-use token bound to the caller\'s current twin, valid `expiresIn` seconds (default 300, at most ' +
          '3600). Callers who are not administrators of their current twin get 403 NOT_TWIN_ADMIN.',
        body: sdkSignBody,
        response: {
          200: z.object({ success: z.literal(true), token: z.string(), expiresAt: z.string() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { token, expiresAt } = await launch.sign(actorOf(request), request.body);
      return { success: true as const, token, expiresAt: expiresAt.toISOString() };
    },
  );

  app.post(
    '/api/auth/sdk-verify',
    {
      config: { auth: 'none', rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a launch token for a session restricted to its twin',
        description:
          'Creates the account when the email is new and adds it to the twin as a user. The session has user ' +
          'rights in that twin only; routes outside its day-to-day work answer 403 LAUNCH_SCOPE_STEP_UP until ' +
          'POST /api/user/launch-scope/challenge and POST /api/auth/mfa-verify. A used, expired or unknown token ' +
          'answers 401 INVALID_LAUNCH_TOKEN.',
        security: [],
        body: sdkVerifyBody,
        response: {
          200: z.object({ token: z.string(), profile: profileSchema, launchScope: z.literal(true) }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => ({ ...(await launch.verify(request.body.token, clientInfo(request))), launchScope: true as const }),
  );
}

export function clientInfo(request: { ip: string; headers: Record<string, unknown> }) {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof agent === 'string' ? agent : '' };
}
