// /api/user/me: one's own sign-in security (authenticator app, password), the launch-session
// step-up, and the administrator's authenticator reset.
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, messageSchema, objectId, type App } from '../../platform/http/schemas.js';
import { clientInfo } from './auth.routes.js';
import { changePasswordBody, totpCodeBody, totpDisableBody } from './auth.schemas.js';
import type { FactorService } from './factors.service.js';
import type { PasswordService } from './password.service.js';
import type { SignInService } from './signin.service.js';

export interface MeRouteDeps {
  factors: FactorService;
  passwords: PasswordService;
  signin: SignInService;
  requestsPerMinute: number;
}

export function meRoutes(app: App, { factors, passwords, signin, requestsPerMinute }: MeRouteDeps): void {
  const rateLimit = { max: requestsPerMinute, timeWindow: 60_000 };

  app.post(
    '/api/user/me/totp/setup',
    {
      schema: {
        tags: ['user'],
        summary: 'Start setting up an authenticator app',
        description:
          'Makes a new pending secret (the active one, if any, keeps working until confirm). Show `otpauthUrl` ' +
          'as a QR code or let the person type `secret`.',
        response: { 200: z.object({ success: z.literal(true), secret: z.string(), otpauthUrl: z.string() }), ...failures(401, 403) },
      },
    },
    async (request) => ({ success: true as const, ...(await factors.setup(actorOf(request))) }),
  );

  app.post(
    '/api/user/me/totp/confirm',
    {
      config: { rateLimit },
      schema: {
        tags: ['user'],
        summary: 'Confirm the authenticator app with a 6-digit code',
        description:
          'Right code: the factor is active (mfaMethod totp, mfaEnabled true) and 10 single-use backup codes are ' +
          'returned, once, never again; other sessions of the person are revoked. Wrong code: 400 INVALID_CODE and ' +
          'the factor stays pending. No pending setup: 400 NO_PENDING_TOTP.',
        body: totpCodeBody,
        response: { 200: z.object({ success: z.literal(true), backupCodes: z.array(z.string()).length(10) }), ...failures(400, 401, 403, 429) },
      },
    },
    async (request) => ({
      success: true as const,
      backupCodes: await factors.confirm(actorOf(request), request.body.code, clientInfo(request)),
    }),
  );

  app.post(
    '/api/user/me/totp/disable',
    {
      config: { rateLimit },
      schema: {
        tags: ['user'],
        summary: 'Remove the authenticator app',
        description:
          'Needs a current authenticator code or an unused backup code. Turns two-step verification off ' +
          '(mfaEnabled false, mfaMethod null), deletes the backup codes and revokes the other sessions.',
        body: totpDisableBody,
        response: { 200: messageSchema, ...failures(400, 401, 403, 429) },
      },
    },
    async (request) => {
      await factors.disable(actorOf(request), request.body.code, clientInfo(request));
      return { success: true as const, message: 'Authenticator app removed' };
    },
  );

  app.post(
    '/api/user/me/password',
    {
      config: { rateLimit },
      schema: {
        tags: ['user'],
        summary: 'Change the password',
        description:
          'Clears mustChangePassword and revokes every other session of the person; this one keeps working. ' +
          'A wrong current password answers 400 INVALID_PASSWORD (throttled); an account that never had a password ' +
          '(made by a launch token or a sign-in provider) answers 400 NO_PASSWORD: use forgot-password.',
        body: changePasswordBody,
        response: { 200: messageSchema, ...failures(400, 401, 403, 429) },
      },
    },
    async (request) => {
      await passwords.change(actorOf(request), request.body, clientInfo(request));
      return { success: true as const, message: 'Password changed' };
    },
  );

  app.post(
    '/api/user/launch-scope/challenge',
    {
      config: { rateLimit },
      schema: {
        tags: ['user'],
        summary: 'Start confirming a launch session with an emailed code',
        description:
          'Mails a 6-digit code to the account. Then POST /api/auth/mfa-verify {code} with this session\'s token ' +
          '(or with the mfaToken returned here) returns a full session. A session that is not restricted answers ' +
          '400 NOT_LAUNCH_SESSION.',
        body: z.object({}).nullish(),
        response: {
          200: z.object({ success: z.literal(true), message: z.string(), mfaToken: z.string(), mfaMethod: z.literal('email') }),
          ...failures(400, 401, 429),
        },
      },
    },
    async (request) => ({
      success: true as const,
      message: 'A code has been sent to your email',
      mfaMethod: 'email' as const,
      ...(await signin.startLaunchChallenge(actorOf(request))),
    }),
  );

  app.post(
    '/api/admin/user/:userId/mfa/reset',
    {
      schema: {
        tags: ['admin'],
        summary: "Reset a person's authenticator app",
        description:
          'Needs users.edit on the account\'s current twin (the caller\'s own when the account has none); only a ' +
          'super admin may reset a super admin. Removes the authenticator and backup codes and revokes the ' +
          "person's sessions; with two-step verification on, the person gets emailed codes until a new app is set " +
          'up. An account of a twin the caller does not belong to answers 404.',
        params: z.object({ userId: objectId }),
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await factors.adminReset(actorOf(request), request.params.userId);
      return { success: true as const, message: 'Authenticator reset' };
    },
  );
}
