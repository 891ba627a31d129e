// Data access for second factors: backup codes, pending challenges and the TOTP replay guard.
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { users } from '../users/users.tables.js';
import { mfaBackupCodes, mfaChallenges, type MfaChallengeRow } from './identity.tables.js';

export async function replaceBackupCodes(db: Executor, userId: string, codeHashes: string[]): Promise<void> {
  await db.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId));
  if (codeHashes.length > 0) await db.insert(mfaBackupCodes).values(codeHashes.map((codeHash) => ({ userId, codeHash })));
}

export async function deleteBackupCodes(db: Executor, userId: string): Promise<void> {
  await db.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId));
}

/** Marks an unused backup code used; false when there is none with that hash (wrong or already used). */
export async function consumeBackupCode(db: Executor, userId: string, codeHash: string): Promise<boolean> {
  const rows = await db
    .update(mfaBackupCodes)
    .set({ usedAt: new Date() })
    .where(and(eq(mfaBackupCodes.userId, userId), eq(mfaBackupCodes.codeHash, codeHash), isNull(mfaBackupCodes.usedAt)))
    .returning({ id: mfaBackupCodes.id });
  return rows.length > 0;
}

export async function countUnusedBackupCodes(db: Executor, userId: string): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(mfaBackupCodes)
    .where(and(eq(mfaBackupCodes.userId, userId), isNull(mfaBackupCodes.usedAt)));
  return row.count;
}

/**
 * Records `step` as the last accepted TOTP step, only if it is newer than the last one: one atomic
 * update, so two requests racing with the same code cannot both win.
 */
export async function claimTotpStep(db: Executor, userId: string, step: number): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ totpLastStep: step })
    .where(and(eq(users.id, userId), or(isNull(users.totpLastStep), lt(users.totpLastStep, step))))
    .returning({ id: users.id });
  return rows.length > 0;
}

export type NewChallenge = typeof mfaChallenges.$inferInsert;

export async function insertChallenge(db: Executor, values: NewChallenge): Promise<MfaChallengeRow> {
  const [row] = await db.insert(mfaChallenges).values(values).returning();
  return row;
}

export async function findChallenge(db: Executor, id: string): Promise<MfaChallengeRow | undefined> {
  const [row] = await db.select().from(mfaChallenges).where(eq(mfaChallenges.id, id)).limit(1);
  return row;
}

/** The newest open step-up challenge of a launch session. */
export async function findOpenLaunchChallenge(db: Executor, sessionId: string): Promise<MfaChallengeRow | undefined> {
  const [row] = await db
    .select()
    .from(mfaChallenges)
    .where(and(eq(mfaChallenges.sessionId, sessionId), eq(mfaChallenges.purpose, 'launch'), isNull(mfaChallenges.consumedAt)))
    .orderBy(sql`${mfaChallenges.createdAt} desc`)
    .limit(1);
  return row;
}

export async function updateChallenge(db: Executor, id: string, values: Partial<NewChallenge>): Promise<void> {
  await db.update(mfaChallenges).set(values).where(eq(mfaChallenges.id, id));
}

/** Counts a wrong code; returns the new count. */
export async function addChallengeAttempt(db: Executor, id: string): Promise<number> {
  const [row] = await db
    .update(mfaChallenges)
    .set({ attempts: sql`${mfaChallenges.attempts} + 1` })
    .where(eq(mfaChallenges.id, id))
    .returning({ attempts: mfaChallenges.attempts });
  return row?.attempts ?? 0;
}

/** Ends the challenge; false when another request already did (the code is single-use). */
export async function consumeChallenge(db: Executor, id: string): Promise<boolean> {
  const rows = await db
    .update(mfaChallenges)
    .set({ consumedAt: new Date() })
    .where(and(eq(mfaChallenges.id, id), isNull(mfaChallenges.consumedAt)))
    .returning({ id: mfaChallenges.id });
  return rows.length > 0;
}
