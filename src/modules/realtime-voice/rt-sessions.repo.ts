// The statements of voice sessions: a session's row written with its token's hash, the token used once
// (one conditional update: unused, unexpired, still open), its end, and the sweep of sessions whose process died.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../platform/db/client.js';
import { hashToken } from '../../platform/crypto/hash.js';
import { rtSessions, type RtSessionRow } from './rt-sessions.tables.js';

export type NewRtSession = typeof rtSessions.$inferInsert;

export async function insertSession(db: Executor, row: NewRtSession): Promise<RtSessionRow> {
  const [inserted] = await db.insert(rtSessions).values(row).returning();
  return inserted!;
}

/** Uses a token: the session it opens becomes live on `processId`; undefined when unknown, used, expired or ended. */
export async function useToken(db: Executor, token: string, processId: string | null, sessionId?: string): Promise<RtSessionRow | undefined> {
  const [row] = await db
    .update(rtSessions)
    .set({ tokenHash: null, status: 'live', processId })
    .where(
      and(
        eq(rtSessions.tokenHash, hashToken(token)),
        eq(rtSessions.status, 'open'),
        sql`${rtSessions.tokenExpiresAt} > now()`,
        sessionId ? eq(rtSessions.id, sessionId) : undefined,
      ),
    )
    .returning();
  return row;
}

export async function findSession(db: Executor, id: string): Promise<RtSessionRow | undefined> {
  const [row] = await db.select().from(rtSessions).where(eq(rtSessions.id, id));
  return row;
}

/** Ends a session still `from` one of the given statuses; the row as it was ended, or undefined. */
export async function endSession(db: Executor, id: string, reason: string, from: Array<'open' | 'live'> = ['open', 'live']): Promise<RtSessionRow | undefined> {
  const [row] = await db
    .update(rtSessions)
    .set({ status: 'ended', endReason: reason, endedAt: new Date(), tokenHash: null })
    .where(and(eq(rtSessions.id, id), inArray(rtSessions.status, from)))
    .returning();
  return row;
}

export async function setSessionRecord(db: Executor, id: string, recordId: string | null): Promise<void> {
  await db.update(rtSessions).set({ recordId }).where(eq(rtSessions.id, id));
}

/**
 * Ends the sessions whose process is gone (unheard for `timeoutSeconds`): their records, still streaming
 * on that process, are settled by the turns' own sweep (conversations/turn-holds.ts).
 */
export async function endSessionsOfGoneProcesses(db: Database, selfId: string | undefined, timeoutSeconds: number): Promise<number> {
  const ended = await db
    .update(rtSessions)
    .set({ status: 'ended', endReason: 'PROCESS_GONE', endedAt: new Date(), tokenHash: null })
    .where(
      and(
        inArray(rtSessions.status, ['open', 'live']),
        sql`${rtSessions.processId} is not null and ${rtSessions.processId} <> ${selfId ?? ''}`,
        sql`not exists (select 1 from service_processes p where p.id = ${rtSessions.processId} and p.seen_at > now() - ${timeoutSeconds} * interval '1 second')`,
      ),
    )
    .returning({ id: rtSessions.id });
  return ended.length;
}
