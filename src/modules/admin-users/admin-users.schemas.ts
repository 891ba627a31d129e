// Wire shapes of account administration: the admin's view of a person, the edit table of the spec,
// create-or-add (behaviour 2), bulk actions (behaviour 13) and import.
import { z } from 'zod';
import { objectId, paginationQuery } from '../../platform/http/schemas.js';
import { PASSWORD_RULE } from '../../platform/crypto/passwords.js';
import { ACCOUNT_TYPES, PLANS, USER_STATUSES } from '../users/users.tables.js';

export const accountType = z.enum(ACCOUNT_TYPES);
export const membershipRole = z.enum(['user', 'admin']);
const password = z.string().min(PASSWORD_RULE.min).max(PASSWORD_RULE.max);
const name = z.string().trim().max(200);

export const adminUserSchema = z
  .object({
    _id: z.string(),
    email: z.string(),
    fname: z.string(),
    lname: z.string(),
    picture: z.string(),
    accountType,
    status: z.enum(USER_STATUSES),
    plan: z.enum(PLANS),
    credits: z.number(),
    creditsUsed: z.number(),
    institution: z.string().nullable().describe('the current twin, null when none'),
    mfaEnabled: z.boolean(),
    mfaMethod: z.enum(['totp', 'email']).nullable(),
    mustChangePassword: z.boolean(),
    created: z.string(),
    updated: z.string(),
    memberships: z
      .array(z.object({ _id: z.string(), institution: z.string(), name: z.string(), role: membershipRole, permissions: z.array(z.string()) }))
      .describe("the person's memberships in twins the caller manages"),
  })
  .describe('An account as an administrator sees it');
export type AdminUserWire = z.infer<typeof adminUserSchema>;

export const userIdParams = z.object({ userId: objectId });

export const listUsersQuery = paginationQuery.extend({
  institution: objectId.optional().describe('only members of this twin (one the caller manages)'),
  status: z.enum(USER_STATUSES).optional(),
});

export const editUserBody = z.object({
  email: z.email().max(320).optional(),
  fname: name.optional(),
  lname: name.optional(),
  password: password.optional(),
  status: z.enum(USER_STATUSES).optional().describe("'deleted' soft-deletes the account and needs users.delete"),
  plan: z.enum(PLANS).optional().describe("'sdk' places the account on `institution`; the others clear its current twin"),
  credits: z.number().min(0).optional(),
  accountType: accountType.optional(),
  institution: objectId.optional().describe("applied only together with plan 'sdk'"),
  mustChangePassword: z.boolean().optional(),
  mfaEnabled: z.boolean().optional(),
});
export type EditUserInput = z.infer<typeof editUserBody>;

/** Known keys are validated; any other key is accepted and reported in ignoredFields. */
export const createUserBody = z
  .object({
    email: z.email().max(320),
    fname: name.optional(),
    lname: name.optional(),
    password: password.optional(),
    accountType: accountType.optional(),
    institution: objectId.optional().describe("the twin to add the person to; the caller's current twin when absent"),
    role: membershipRole.optional(),
    mustChangePassword: z.boolean().optional(),
  })
  .loose();
export type CreateUserInput = z.infer<typeof createUserBody>;


export const importRow = z.object({
  email: z.string().max(320),
  fname: z.string().max(200).optional(),
  lname: z.string().max(200).optional(),
  password: z.string().max(PASSWORD_RULE.max).optional(),
  accountType: z.string().optional(),
  role: z.string().optional(),
});
export type ImportRow = z.infer<typeof importRow>;

export const IMPORT_MAX_ROWS = 1000;
export const importBody = z
  .object({
    users: z.array(importRow).max(IMPORT_MAX_ROWS).optional(),
    csv: z.string().max(2_000_000).optional().describe('CSV text with a header row: email, fname, lname, password, accountType, role'),
    role: membershipRole.optional().describe("role of rows that name none ('user' when absent)"),
    accountType: accountType.optional().describe("account type of rows that name none ('user' for new accounts when absent)"),
    institution: objectId.optional().describe("the importing twin; the caller's current twin when absent"),
  })
  .refine((body) => Boolean(body.users) !== Boolean(body.csv), { message: 'give either users or csv' });

export const importOutcome = z.object({
  row: z.number().int().describe('1-based position in users (or data line of the CSV)'),
  email: z.string(),
  outcome: z.enum(['created', 'added', 'updated', 'unchanged', 'error']),
  userId: z.string().optional(),
  message: z.string().optional(),
  ignoredFields: z.array(z.string()).optional(),
});
export const importResponse = z.object({
  success: z.literal(true),
  total: z.number().int(),
  created: z.number().int(),
  added: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  failed: z.number().int(),
  results: z.array(importOutcome),
});
export type ImportOutcome = z.infer<typeof importOutcome>;
