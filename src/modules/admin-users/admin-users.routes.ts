// /api/admin/users and /api/admin/user: account administration (spec behaviours 2, 3 and 13).
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { bulkActionBody, changedSchema, failures, type App } from '../../platform/http/schemas.js';
import type { EnrolService } from './admin-users.import.js';
import {
  adminUserSchema,
  createUserBody,
  editUserBody,
  importBody,
  importResponse,
  listUsersQuery,
  userIdParams,
} from './admin-users.schemas.js';
import type { AdminUsersService } from './admin-users.service.js';

const tags = ['admin: users'];
const userResult = z.object({ success: z.literal(true), message: z.string().optional(), data: adminUserSchema, ignoredFields: z.array(z.string()) });
const SCOPE =
  'An account is visible when it belongs to a twin where the caller holds users.list (super admins see all); ' +
  'any other account answers 404 User not found. ';

export function adminUserRoutes(app: App, users: AdminUsersService, enrol: EnrolService): void {
  app.get(
    '/api/admin/users',
    {
      schema: {
        tags,
        summary: 'List accounts (paginated, searchable)',
        description: SCOPE + '`search` matches email, first or last name. Deleted accounts are not listed. Newest first.',
        querystring: listUsersQuery,
        response: {
          200: z.object({ success: z.literal(true), data: z.array(adminUserSchema), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 403),
        },
      },
    },
    async (request) => users.list(actorOf(request), request.query),
  );

  app.get(
    '/api/admin/user/:userId',
    {
      schema: {
        tags,
        summary: 'One account',
        description: SCOPE,
        params: userIdParams,
        response: { 200: z.object({ success: z.literal(true), data: adminUserSchema }), ...failures(400, 401, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await users.get(actorOf(request), request.params.userId) }),
  );

  app.post(
    '/api/admin/user',
    {
      schema: {
        tags,
        summary: 'Create an account, or add an existing one to a twin (behaviour 2)',
        description:
          'Needs users.create in `institution` (the caller\'s current twin when absent). A new email creates the account ' +
          '(201) as a member of that twin with `role` (default user), which becomes its current twin; without a password it ' +
          'signs in after a password reset. A known email only adds the person to the twin (200): the membership role is ' +
          'raised, never lowered; the account type is raised when a higher one is asked (user < admin < super; only a super ' +
          'admin may grant super, 403 otherwise) and never lowered; names, password, credits, status, plan, current twin and ' +
          'MFA stay untouched. `ignoredFields` lists every given field that was not applied, unknown keys included.',
        body: createUserBody,
        response: { 200: userResult, 201: userResult, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const result = await enrol.create(actorOf(request), request.body);
      return reply.status(result.created ? 201 : 200).send(result.body);
    },
  );

  app.put(
    '/api/admin/user/:userId',
    {
      schema: {
        tags,
        summary: 'Edit an account (spec table)',
        description:
          SCOPE +
          'Needs users.edit (users.delete for status deleted) on the account\'s current twin, or on the caller\'s own twin when ' +
          'the account has none, else 403; and users.edit on `institution` when it names another twin. Only a super admin ' +
          'edits a super admin or assigns the super role (403 SUPER_ONLY). plan sdk with institution moves the account there ' +
          '(adding a user membership when missing); other plans clear its current twin; institution without plan sdk is ' +
          'not applied and listed in ignoredFields. Moving clears the chosen voice assistant. credits sets the balance ' +
          '(recorded in the credit ledger). status inactive or deleted revokes the person\'s sessions; a new password revokes ' +
          'their other sessions. An email in use answers 409 EMAIL_TAKEN. One cannot deactivate or delete oneself (400 ' +
          'SELF_ACTION). 200: {success, message, data: the account, ignoredFields}.',
        params: userIdParams,
        body: editUserBody,
        response: { 200: userResult, ...failures(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const result = await users.edit(actorOf(request), request.params.userId, request.body);
      return { success: true as const, message: 'User updated', ...result };
    },
  );

  app.delete(
    '/api/admin/user/:userId',
    {
      schema: {
        tags,
        summary: 'Delete an account (soft)',
        description:
          SCOPE +
          'Needs users.delete on the account\'s current twin. The account is deactivated (status deleted), its sessions are ' +
          'revoked and its email is freed for a new account; its history stays for audit.',
        params: userIdParams,
        response: { 200: z.object({ success: z.literal(true), message: z.string() }), ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await users.remove(actorOf(request), request.params.userId);
      return { success: true as const, message: 'User deleted' };
    },
  );

  app.post(
    '/api/admin/users/bulk',
    {
      schema: {
        tags,
        summary: 'Activate, deactivate or delete many accounts (behaviour 13)',
        description:
          'Rows the caller may not act on (outside their twins, super accounts for a non-super, the caller\'s own account, ' +
          'already in the asked state, unknown ids) are left alone. `changed` counts the rows that changed.',
        body: bulkActionBody,
        response: { 200: changedSchema, ...failures(400, 401) },
      },
    },
    async (request) => ({ success: true as const, changed: await users.bulk(actorOf(request), request.body.action, request.body.ids) }),
  );

  app.post(
    '/api/admin/users/import',
    {
      schema: {
        tags,
        summary: 'Import many people (JSON rows or CSV text)',
        description:
          'Give `users` (rows {email, fname?, lname?, password?, accountType?, role?}) or `csv` (a header row naming those ' +
          'columns), at most 1000 rows. Needs users.create in `institution` (the caller\'s current twin when absent). Each row ' +
          'follows behaviour 2 exactly as POST /api/admin/user; a bad row is reported and the import goes on. Outcomes: created, ' +
          'added (existing account joined the twin), updated (role or account type raised), unchanged, error.',
        body: importBody,
        response: { 200: importResponse, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => enrol.importUsers(actorOf(request), request.body),
  );
}
