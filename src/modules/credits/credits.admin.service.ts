// The administrators' side of credits: awarding free credits to a twin (super admins) and reading a
// twin's ledger (credits.edit in it).
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { requireAccess } from '../access/access.js';
import { findTwinById } from '../twins/twins.repo.js';
import { listLedger } from './credits.repo.js';
import type { LedgerEntryWire } from './credits.schemas.js';
import { awardCredits } from './credits.service.js';
import type { CreditLedgerRow } from './credits.tables.js';

const present = (row: CreditLedgerRow): LedgerEntryWire => ({
  _id: row.id,
  institution: row.twinId,
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
    async awardFree(actor: Actor, twinId: string, credits: number): Promise<string> {
      await requireAccess(db, actor, 'credits.award', {});
      const twin = await findTwinById(db, twinId);
      if (!twin) throw new NotFoundError('Institution not found');
      const change = await awardCredits(db, {
        account: 'institution',
        twinId,
        amount: credits,
        reason: 'admin.free_award',
        actorId: actor.userId,
        freeAward: true,
      });
      return `Awarded ${credits} free credits to ${twin.name}; balance ${change.balance}`;
    },

    async ledger(actor: Actor, twinId: string, page: { page: number; limit: number }) {
      await requireAccess(db, actor, 'credits.read', { twinId });
      const { rows, total } = await listLedger(db, { twinId }, { offset: (page.page - 1) * page.limit, limit: page.limit });
      return { success: true as const, data: rows.map(present), page: page.page, limit: page.limit, total };
    },
  };
}

export type CreditsAdmin = ReturnType<typeof createCreditsAdmin>;
