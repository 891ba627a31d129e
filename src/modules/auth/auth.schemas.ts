// Wire shapes of /api/auth and /api/user/me: sign-in (with or without a second factor), codes,
// passwords and launch tokens.
import { z } from 'zod';
import { profileSchema } from '../users/profile.schemas.js';
import { PASSWORD_RULE } from '../../platform/crypto/passwords.js';
import { LAUNCH_TOKEN_MAX_SECONDS } from './launch.service.js';

export const signInBody = z.object({
  email: z.email().max(320),
  password: z.string().min(1).max(PASSWORD_RULE.max),
});

export const signedInSchema = z.object({ token: z.string(), profile: profileSchema });

export const mfaMethodSchema = z.enum(['totp', 'email', 'backup']);

export const mfaRequiredSchema = z
  .object({
    success: z.literal(true),
    mfaRequired: z.literal(true),
    mfaToken: z.string().describe('names this pending sign-in for mfa-verify and mfa-resend; valid 15 minutes'),
    mfaMethod: z.enum(['totp', 'email']).describe('the method asked first; with email a code has been mailed'),
    methods: z.array(mfaMethodSchema).describe('methods this account can use'),
  })
  .describe('Second factor required: no session yet');

export const mfaVerifyBody = z.object({
  mfaToken: z.string().min(1).max(2048).optional().describe('required, except for the step-up of the launch session that sends the request'),
  code: z.string().trim().min(1).max(64),
  method: mfaMethodSchema.optional().describe('defaults to the method the sign-in is on'),
});

export const mfaResendBody = z.object({ mfaToken: z.string().min(1).max(2048).optional() }).nullish();

export const passwordSchema = z.string().min(PASSWORD_RULE.min).max(PASSWORD_RULE.max);

export const changePasswordBody = z.object({ currentPassword: z.string().min(1).max(PASSWORD_RULE.max), newPassword: passwordSchema });
export const forgotPasswordBody = z.object({ email: z.email().max(320) });
export const resetPasswordBody = z.object({ token: z.string().min(1).max(512), password: passwordSchema });

export const totpCodeBody = z.object({ code: z.string().trim().regex(/^\d{6}$/, 'must be 6 digits') });
export const totpDisableBody = z.object({ code: z.string().trim().min(6).max(64).describe('a current authenticator code or an unused backup code') });

export const sdkSignBody = z.object({
  email: z.email().max(320),
  fname: z.string().max(200).optional(),
  lname: z.string().max(200).optional(),
  role: z.literal('user').optional().describe('launch sessions always have user rights'),
  expiresIn: z.number().int().min(30).max(LAUNCH_TOKEN_MAX_SECONDS).optional().describe('seconds; default 300'),
});
export const sdkVerifyBody = z.object({ token: z.string().min(1).max(512) });
