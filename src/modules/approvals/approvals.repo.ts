// Queries of approval cards. A card ends once: every ending is a conditional update of a pending row,
// so of a person's decision racing another tab's, its expiry or its turn's cancel, exactly one wins.
import { and, asc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { toolApprovals, type CardDecision, type PersonDecision, type ToolApprovalRow } from './approvals.tables.js';

export type NewCard = typeof toolApprovals.$inferInsert;

export async function insertCard(db: Executor, values: NewCard): Promise<ToolApprovalRow> {
  const [row] = await db.insert(toolApprovals).values(values).returning();
  return row;
}

/** The person's decision on their own pending, unexpired card; undefined when it is not (any more). */
export async function decideCard(db: Executor, id: string, userId: string, decision: PersonDecision): Promise<ToolApprovalRow | undefined> {
  const [row] = await db
    .update(toolApprovals)
    .set({ decision, decidedBy: userId, decidedAt: sql`now()` })
    .where(and(eq(toolApprovals.id, id), eq(toolApprovals.userId, userId), isNull(toolApprovals.decision), gt(toolApprovals.expiresAt, sql`now()`)))
    .returning();
  return row;
}

/** Ends a pending card without a person: its expiry or its turn's cancel. */
export async function endCard(db: Executor, id: string, decision: Extract<CardDecision, 'expired' | 'cancelled'>): Promise<ToolApprovalRow | undefined> {
  const [row] = await db
    .update(toolApprovals)
    .set({ decision, decidedAt: sql`now()` })
    .where(and(eq(toolApprovals.id, id), isNull(toolApprovals.decision)))
    .returning();
  return row;
}

export async function findCard(db: Executor, id: string): Promise<ToolApprovalRow | undefined> {
  const [row] = await db.select().from(toolApprovals).where(eq(toolApprovals.id, id)).limit(1);
  return row;
}

/** The person's cards still waiting in a twin, oldest first. */
export async function listPending(db: Executor, twinId: string, userId: string): Promise<ToolApprovalRow[]> {
  return db
    .select()
    .from(toolApprovals)
    .where(and(eq(toolApprovals.twinId, twinId), eq(toolApprovals.userId, userId), isNull(toolApprovals.decision), gt(toolApprovals.expiresAt, sql`now()`)))
    .orderBy(asc(toolApprovals.createdAt))
    .limit(100);
}

/** When that tool of that server was approved for the rest of the conversation; undefined if never. */
export async function conversationGrant(
  db: Executor,
  where: { twinId: string; conversationId: string; serverId: string; tool: string },
): Promise<Date | undefined> {
  const [row] = await db
    .select({ decidedAt: toolApprovals.decidedAt })
    .from(toolApprovals)
    .where(
      and(
        eq(toolApprovals.twinId, where.twinId),
        eq(toolApprovals.conversationId, where.conversationId),
        eq(toolApprovals.serverId, where.serverId),
        eq(toolApprovals.tool, where.tool),
        eq(toolApprovals.decision, 'approve_conversation'),
      ),
    )
    .limit(1);
  return row?.decidedAt ?? undefined;
}

/** Pending cards past their expiry (their turn's process is gone): marked expired. */
export async function expireOverdue(db: Executor): Promise<number> {
  const rows = await db
    .update(toolApprovals)
    .set({ decision: 'expired', decidedAt: sql`now()` })
    .where(and(isNull(toolApprovals.decision), sql`${toolApprovals.expiresAt} <= now()`))
    .returning({ id: toolApprovals.id });
  return rows.length;
}
