// /api/admin credit routes: award free credits to a twin (spec) and read a twin's ledger (audit).
import { z } from 'zod';
import { actorOf } from '../../platform/http/auth-guard.js';
import { failures, idParams, messageSchema, paginationQuery, type App } from '../../platform/http/schemas.js';
import type { CreditsAdmin } from './credits.admin.service.js';
import { ledgerEntry } from './credits.schemas.js';

export function creditRoutes(app: App, credits: CreditsAdmin): void {
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
