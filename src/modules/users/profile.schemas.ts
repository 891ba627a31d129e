// Wire shapes of the sign-in profile, field for field as the spec names them (its institution object:
// twins/twin-object.ts).
import { z } from 'zod';
import { twinObjectSchema } from '../twins/twin-object.js';

const isoDateTime = z.string().nullable().describe('ISO 8601 UTC date-time, null when unset');

export const profileSchema = z
  .object({
    _id: z.string(),
    email: z.string(),
    fname: z.string(),
    lname: z.string(),
    picture: z.string(),
    accountType: z.enum(['user', 'admin', 'super']),
    permissions: z.array(z.string()).describe('permissions held in the current twin'),
    customerId: z.string(),
    lxp_user_id: z.string(),
    lxp_partner_id: z.string(),
    lxp_partner_name: z.string(),
    lxp_role_name: z.string(),
    lxp_user_type: z.number().int(),
    lxp_role_id: z.number().int(),
    credits: z.number(),
    creditsUsed: z.number(),
    plan: z.enum(['free', 'entry', 'premium', 'pro', 'monthly', 'sdk']),
    status: z.enum(['active', 'inactive', 'trialing', 'deleted']),
    trial_end: isoDateTime,
    current_period_end: isoDateTime,
    created: z.string(),
    trial_used: z.boolean(),
    cancel_at_period_end: z.boolean(),
    use_location: z.boolean(),
    pin_ui: z.boolean(),
    dark_mode: z.boolean(),
    referralId: z.string().uuid(),
    resetCodeId: z.string().uuid().nullable(),
    referrerPaid: z.boolean(),
    invoices_urls: z.array(z.string()),
    remember_history_count: z.number().int(),
    max_dialogues: z.number().int(),
    __v: z.number().int(),
    browser_voice: z.string(),
    rt_voice: z.string(),
    mfaEnabled: z.boolean(),
    mfaMethod: z.enum(['totp', 'email']).nullable(),
    mustChangePassword: z.boolean(),
    userMemoryEnabled: z.boolean(),
    favoriteAssistants: z.array(z.unknown()).describe('favorite assistants, populated on profile refresh'),
    institution: twinObjectSchema
      .extend({
        subscriptionConnected: z
          .boolean()
          .describe("the twin has a usable chat subscription connected (its assistants answer through it); only this boolean, never the account or a token"),
      })
      .nullable()
      .describe('the current twin, null when the person has none'),
  })
  .describe('Sign-in profile');

export type ProfileWire = z.infer<typeof profileSchema>;
