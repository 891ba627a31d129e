// Data access for sessions, and the one query the auth guard runs per request.
import { and, eq, gt, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { memberships, twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { sessions, type SessionRow } from './sessions.tables.js';

export type NewSession = typeof sessions.$inferInsert;

export async function insertSession(db: Executor, values: NewSession): Promise<SessionRow> {
  const [row] = await db.insert(sessions).values(values).returning();
  return row;
}

export interface SessionContext {
  sessionId: string;
  kind: SessionRow['kind'];
  sessionTwinId: string | null;
  userId: string;
  email: string;
  accountType: 'user' | 'admin' | 'super';
  status: string;
  currentTwinId: string | null;
  mustChangePassword: boolean;
  role: 'user' | 'admin' | null;
  grants: string[] | null;
}

/** A live session with its account and the membership of the twin it works in. */
export async function findSessionContext(db: Executor, sessionId: string, userId: string): Promise<SessionContext | undefined> {
  // A launch session works in its own twin; a full session in the account's current twin.
  const workingTwin = sql`case when ${sessions.kind} = 'launch' then ${sessions.twinId} else ${users.currentTwinId} end`;
  const [row] = await db
    .select({
      sessionId: sessions.id,
      kind: sessions.kind,
      sessionTwinId: sessions.twinId,
      userId: users.id,
      email: users.email,
      accountType: users.accountType,
      status: users.status,
      currentTwinId: users.currentTwinId,
      mustChangePassword: users.mustChangePassword,
      role: memberships.role,
      grants: memberships.permissions,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .leftJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.twinId, workingTwin)))
    .where(
      and(
        eq(sessions.id, sessionId),
        eq(sessions.userId, userId),
        ne(sessions.kind, 'visitor'),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, new Date()),
        isNull(users.deletedAt),
      ),
    )
    .limit(1);
  return row;
}

/** A live visitor session of an active twin: the visitor's id and the twin it is bound to. */
export async function findVisitorSession(db: Executor, sessionId: string, visitorId: string): Promise<{ twinId: string } | undefined> {
  const [row] = await db
    .select({ twinId: twins.id })
    .from(sessions)
    .innerJoin(twins, eq(twins.id, sessions.twinId))
    .where(
      and(
        eq(sessions.id, sessionId),
        eq(sessions.userId, visitorId),
        eq(sessions.kind, 'visitor'),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, new Date()),
        eq(twins.status, 'active'),
        isNull(twins.deletedAt),
      ),
    )
    .limit(1);
  return row;
}

export async function revokeSession(db: Executor, sessionId: string): Promise<boolean> {
  const rows = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return rows.length > 0;
}

/** Revokes every live session of a person, except one (the caller's own, when they keep it). */
export async function revokeUserSessions(db: Executor, userId: string, exceptSessionId?: string): Promise<string[]> {
  const rows = await db
    .update(sessions)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(sessions.userId, userId),
        isNull(sessions.revokedAt),
        exceptSessionId ? ne(sessions.id, exceptSessionId) : undefined,
      ),
    )
    .returning({ id: sessions.id });
  return rows.map((row) => row.id);
}
