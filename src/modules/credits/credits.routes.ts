// /api/admin credit routes: award free credits to a twin (spec) and read a twin's ledger (audit).
import { z } from 'zod';
import type { Database } from '../../platform/db/client.js';
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { actorOf } from '../../platform/http/auth-guard.js';
import { ForbiddenError, NotFoundError } from '../../platform/http/errors.js';
import { failures, idParams, messageSchema, paginationQuery, type App } from '../../platform/http/schemas.js';
import { findInstitutionById } from '../institutions/institutions.repo.js';
import { hasPermission } from '../institutions/access.js';
import { listLedger } from './credits.repo.js';
import { awardCredits } from './credits.service.js';
import type { CreditLedgerRow } from './credits.tables.js';

const ledgerEntry = z.object({
  _id: z.string(),
  institution: z.string().nullable(),
  account: z.enum(['institution', 'user']),
  user: z.string().nullable(),
  delta: z.number(),
  balanceAfter: z.number(),
  reason: z.string(),
  actor: z.string().nullable(),
  created: z.string(),
});

const present = (row: CreditLedgerRow): z.infer<typeof ledgerEntry> => ({
  _id: row.id,
  institution: row.institutionId,
  account: row.account,
  user: row.userId,
  delta: row.delta,
  balanceAfter: row.balanceAfter,
  reason: row.reason,
  actor: row.actorId,
  created: row.createdAt.toISOString(),
});

export function createCreditsAdmin(db: Database) {
  return {
    async awardFree(actor: Actor, institutionId: string, credits: number): Promise<string> {
      if (!isSuper(actor)) throw new ForbiddenError('Only a super admin can award free credits', 'SUPER_ONLY');
      const twin = await findInstitutionById(db, institutionId);
      if (!twin) throw new NotFoundError('Institution not found');
      const change = await awardCredits(db, {
        account: 'institution',
        institutionId,
        amount: credits,
        reason: 'admin.free_award',
        actorId: actor.userId,
        freeAward: true,
      });
      return `Awarded ${credits} free credits to ${twin.name}; balance ${change.balance}`;
    },

    async ledger(actor: Actor, institutionId: string, page: { page: number; limit: number }) {
      if (!(await hasPermission(db, actor, institutionId, 'credits.edit')) || !(await findInstitutionById(db, institutionId))) {
        throw new NotFoundError('Institution not found');
      }
      const { rows, total } = await listLedger(db, { institutionId }, { offset: (page.page - 1) * page.limit, limit: page.limit });
      return { success: true as const, data: rows.map(present), page: page.page, limit: page.limit, total };
    },
  };
}

export function creditRoutes(app: App, db: Database): void {
  const credits = createCreditsAdmin(db);
  app.put(
    '/api/admin/freeInstitutionCreditsById/:id',
    {
      schema: {
        tags: ['admin: credits'],
        summary: 'Award free credits to an institution',
        description:
          'Super admins only (403 SUPER_ONLY otherwise). Adds `credits` (a positive number) to the twin\'s balance and to its ' +
          'creditAward (the free credits granted so far), with a ledger row naming the caller. 404 when the twin does not exist.',
        params: idParams,
        body: z.object({ credits: z.number().positive().max(1e12) }),
        response: { 200: messageSchema, ...failures(400, 401, 403, 404) },
      },
    },
    async (request) => ({
      success: true as const,
      message: await credits.awardFree(actorOf(request), request.params.id, request.body.credits),
    }),
  );

  app.get(
    '/api/admin/institution/:id/credits/ledger',
    {
      schema: {
        tags: ['admin: credits'],
        summary: "A twin's credit ledger (newest first)",
        description:
          'Every change of the twin\'s pool and of its people\'s balances made in it: who, why, how much and the balance after. ' +
          'Needs credits.edit in the twin; any other twin answers 404.',
        params: idParams,
        querystring: paginationQuery.omit({ search: true }),
        response: {
          200: z.object({ success: z.literal(true), data: z.array(ledgerEntry), page: z.number(), limit: z.number(), total: z.number() }),
          ...failures(400, 401, 404),
        },
      },
    },
    async (request) => credits.ledger(actorOf(request), request.params.id, request.query),
  );
}
