// Wire shapes of entitlements: what a twin (or every twin of an account) may use.
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';

const names = z.array(z.string().trim().min(1).max(200)).max(500);
const cap = z.number().int().min(0).nullable().optional();

export const capsSchema = z
  .object({ dailyTurns: cap, userDailyTurns: cap, maxFiles: cap, maxCompletionTokens: cap, monthlyCredits: cap })
  .describe('limits; null or absent = no limit from this entitlement');

export const entitlementSchema = z.object({
  _id: z.string(),
  name: z.string(),
  description: z.string(),
  institution: z.string().nullable(),
  accountId: z.string().nullable(),
  status: z.enum(['active', 'inactive']),
  models: z.array(z.string()),
  tools: z.array(z.string()),
  features: z.array(z.string()),
  caps: capsSchema,
  expiresAt: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
});
export type EntitlementWire = z.infer<typeof entitlementSchema>;

export const writableEntitlement = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
  institution: objectId.nullable().optional().describe('the twin it applies to'),
  accountId: objectId.nullable().optional().describe('or: every twin of this account'),
  status: z.enum(['active', 'inactive']).optional(),
  models: names.optional(),
  tools: names.optional(),
  features: names.optional(),
  caps: capsSchema.optional(),
  expiresAt: z.iso.datetime().nullable().optional(),
});
export const createEntitlementBody = writableEntitlement;
export const editEntitlementBody = writableEntitlement.partial();
export type EntitlementInput = z.infer<typeof editEntitlementBody>;

export const listEntitlementsQuery = paginationQuery.extend({ institution: objectId.optional() });
export const entitlementResult = z.object({ success: z.literal(true), data: entitlementSchema });
