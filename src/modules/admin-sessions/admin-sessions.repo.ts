// Data access for the administrators' view of sessions: live sessions of one twin, newest first.
import { and, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { sessions, type SessionRow } from '../auth/sessions.tables.js';
import { users } from '../users/users.tables.js';

const live = () => and(isNull(sessions.revokedAt), gt(sessions.expiresAt, new Date()));

export interface SessionListRow {
  session: SessionRow;
  user: { id: string; email: string; fname: string; lname: string };
}

export async function listTwinSessions(db: Executor, twinId: string, page: number, limit: number): Promise<{ rows: SessionListRow[]; total: number }> {
  const where = and(eq(sessions.twinId, twinId), live());
  const rows = await db
    .select({ session: sessions, user: { id: users.id, email: users.email, fname: users.fname, lname: users.lname } })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(where)
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(limit)
    .offset((page - 1) * limit);
  const [{ total }] = await db.select({ total: sql<number>`count(*)::int` }).from(sessions).where(where);
  return { rows, total };
}

export async function findLiveSession(db: Executor, id: string): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(sessions).where(and(eq(sessions.id, id), live())).limit(1);
  return row;
}

/** Revokes the live sessions among `ids` that belong to the twin; returns them. */
export async function revokeTwinSessions(db: Executor, twinId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.twinId, twinId), inArray(sessions.id, ids), live()))
    .returning({ id: sessions.id });
  return rows.map((row) => row.id);
}
