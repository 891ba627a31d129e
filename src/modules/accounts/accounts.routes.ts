// /api/admin/accounts and /api/admin/account: the accounts family of the contract additions.
import { actorOf } from '../../platform/http/auth-guard.js';
import { changedSchema, failures, idParams, idsBody, messageSchema, type App } from '../../platform/http/schemas.js';
import { accountList, accountResult, createAccountBody, editAccountBody, listAccountsQuery } from './accounts.schemas.js';
import type { AccountsService } from './accounts.service.js';

const tags = ['admin: accounts'];
const RULES =
  'An account groups twins: their account_shared assistants reach the people of every twin of the account, and an ' +
  'entitlement given to the account applies to each of its twins. A twin joins one with PUT /api/admin/institution/{id} ' +
  '{accountId} (null leaves it). Super admins only: anyone else gets 403 SUPER_ONLY. ';

export function accountRoutes(app: App, service: AccountsService): void {
  app.get(
    '/api/admin/accounts',
    {
      schema: {
        tags,
        summary: 'List accounts (paginated, searchable by name and contact email)',
        description: RULES + 'Newest first; each with the live twins that joined it.',
        querystring: listAccountsQuery,
        response: { 200: accountList, ...failures(400, 401, 403) },
      },
    },
    async (request) => service.list(actorOf(request), request.query),
  );

  app.get(
    '/api/admin/account/:id',
    { schema: { tags, summary: 'One account', description: RULES + 'Unknown id: 404 ACCOUNT_NOT_FOUND.', params: idParams, response: { 200: accountResult, ...failures(400, 401, 403, 404) } } },
    async (request) => ({ success: true as const, data: await service.get(actorOf(request), request.params.id) }),
  );

  app.post(
    '/api/admin/account',
    {
      schema: {
        tags,
        summary: 'Create an account',
        description: RULES + '`name` is required and non-empty; `contactEmail` an email or empty.',
        body: createAccountBody,
        response: { 201: accountResult, ...failures(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send({ success: true as const, data: await service.create(actorOf(request), request.body) }),
  );

  app.put(
    '/api/admin/account/:id',
    {
      schema: {
        tags,
        summary: 'Edit an account',
        description: RULES + 'Only name and contactEmail are applied; unknown keys are dropped. Unknown id: 404 ACCOUNT_NOT_FOUND.',
        params: idParams,
        body: editAccountBody,
        response: { 200: accountResult, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({ success: true as const, data: await service.edit(actorOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/api/admin/account/:id',
    {
      schema: {
        tags,
        summary: 'Delete an account',
        description: RULES + 'Its twins leave it (they stay, with no account: their assistants lose account sharing) and the entitlements given to it are removed.',
        params: idParams,
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await service.remove(actorOf(request), request.params.id);
      return { success: true as const, message: 'Account deleted' };
    },
  );

  app.post(
    '/api/admin/accounts/bulk-delete',
    {
      schema: {
        tags,
        summary: 'Delete many accounts',
        description: RULES + 'As DELETE for each; unknown ids are skipped and `changed` counts the accounts deleted.',
        body: idsBody(500),
        response: { 200: changedSchema, ...failures(400, 401, 403) },
      },
    },
    async (request) => ({ success: true as const, changed: await service.bulkDelete(actorOf(request), request.body.ids) }),
  );
}
