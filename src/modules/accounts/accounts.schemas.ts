// Wire shapes of accounts: a customer grouping twins (account-shared assistants, account-wide entitlements).
import { z } from 'zod';
import { paginationQuery } from '../../platform/http/schemas.js';

export const accountSchema = z.object({
  _id: z.string(),
  name: z.string(),
  contactEmail: z.string(),
  institutions: z.array(z.object({ _id: z.string(), name: z.string() })).describe('the live twins that joined it (PUT /api/admin/institution/{id} {accountId})'),
  created: z.string(),
  updated: z.string(),
});
export type AccountWire = z.infer<typeof accountSchema>;

export const createAccountBody = z.object({
  name: z.string().trim().min(1).max(200),
  contactEmail: z.union([z.email().max(320), z.literal('')]).optional(),
});
export const editAccountBody = createAccountBody.partial();
export type AccountInput = z.infer<typeof editAccountBody>;

export const listAccountsQuery = paginationQuery;
export const accountResult = z.object({ success: z.literal(true), data: accountSchema });
export const accountList = z.object({ success: z.literal(true), data: z.array(accountSchema), page: z.number(), limit: z.number(), total: z.number() });
