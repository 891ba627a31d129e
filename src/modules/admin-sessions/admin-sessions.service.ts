// Administrators' sessions family: list a twin's live sessions, revoke one, revoke many. A session of
// a twin the caller cannot administer answers as not found; revocation bites at once in every process.
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { BadRequestError } from '../../platform/http/errors.js';
import type { SessionCache } from '../auth/session-cache.js';
import { requireAccess } from '../access/access.js';
import { findLiveSession, listTwinSessions, revokeTwinSessions } from './admin-sessions.repo.js';
import { presentSession } from './admin-sessions.schemas.js';

export function createAdminSessionsService({ db, cache }: { db: Database; cache: SessionCache }) {
  function twinOf(actor: Actor, twinId?: string): string {
    const twin = twinId ?? actor.twinId;
    if (!twin) throw new BadRequestError('Choose a twin first: you have no current twin', 'NO_TWIN');
    return twin;
  }

  return {
    async list(actor: Actor, query: { page: number; limit: number; twinId?: string }) {
      const twin = twinOf(actor, query.twinId);
      await requireAccess(db, actor, 'sessions.list', { twin });
      const { rows, total } = await listTwinSessions(db, twin, query.page, query.limit);
      return { data: rows.map(presentSession), page: query.page, limit: query.limit, total };
    },

    async remove(actor: Actor, id: string): Promise<void> {
      const session = await findLiveSession(db, id);
      await requireAccess(db, actor, 'session.delete', { session });
      const revoked = await revokeTwinSessions(db, session!.twinId!, [id]);
      await cache.invalidate({ sessionIds: revoked });
    },

    /** Only sessions of the caller's current twin are actionable; the rest are skipped and not counted. */
    async bulkRemove(actor: Actor, ids: string[]): Promise<number> {
      const twin = twinOf(actor);
      await requireAccess(db, actor, 'sessions.delete', { twin });
      const revoked = await revokeTwinSessions(db, twin, [...new Set(ids)]);
      if (revoked.length > 0) await cache.invalidate({ sessionIds: revoked });
      return revoked.length;
    },
  };
}

export type AdminSessionsService = ReturnType<typeof createAdminSessionsService>;
