// Reads of the voice-agent calls: the twin a voice agent speaks for, the person in that twin, and the
// calls that ended.
import { and, eq, gt, isNull, lt, notInArray, sql } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { memberships, twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';
import { voiceAgentEndedCalls } from './voice-agent.tables.js';

export interface VoiceAgentTwin {
  id: string;
  toolsDisabled: string[];
}

/** The active twin whose branding names this voice agent; undefined when none does, or several do (ambiguous: refused). */
export async function findVoiceAgentTwin(db: Executor, voiceAgentId: string): Promise<VoiceAgentTwin | undefined> {
  const rows = await db
    .select({ id: twins.id, toolsDisabled: twins.toolsDisabled })
    .from(twins)
    .where(and(eq(twins.voiceAgentId, voiceAgentId), eq(twins.status, 'active'), isNull(twins.deletedAt)))
    .limit(2);
  return rows.length === 1 ? rows[0] : undefined;
}

export interface VoiceAgentPerson {
  userId: string;
  email: string;
  accountType: 'user' | 'admin' | 'super';
  role: 'user' | 'admin';
  grants: string[];
}

/** The person, when they are an active member of the twin. */
export async function findTwinMember(db: Executor, twinId: string, userId: string): Promise<VoiceAgentPerson | undefined> {
  const [row] = await db
    .select({ userId: users.id, email: users.email, accountType: users.accountType, role: memberships.role, grants: memberships.permissions })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.twinId, twinId), eq(memberships.userId, userId), isNull(users.deletedAt), notInArray(users.status, ['inactive', 'deleted'])))
    .limit(1);
  return row;
}

/** How long an ended call is remembered: longer than any call's tools would be asked for after its end. */
export const ENDED_CALL_KEPT_MS = 24 * 3_600_000;

/** Marks the call ended (again: its day starts over); calls whose day has passed go meanwhile. */
export async function markCallEnded(db: Executor, twinId: string, callId: string): Promise<void> {
  await db.delete(voiceAgentEndedCalls).where(lt(voiceAgentEndedCalls.expiresAt, sql`now()`));
  const expiresAt = new Date(Date.now() + ENDED_CALL_KEPT_MS);
  await db
    .insert(voiceAgentEndedCalls)
    .values({ twinId, callId, expiresAt })
    .onConflictDoUpdate({ target: [voiceAgentEndedCalls.twinId, voiceAgentEndedCalls.callId], set: { expiresAt } });
}

export async function callHasEnded(db: Executor, twinId: string, callId: string): Promise<boolean> {
  const [row] = await db
    .select({ callId: voiceAgentEndedCalls.callId })
    .from(voiceAgentEndedCalls)
    .where(and(eq(voiceAgentEndedCalls.twinId, twinId), eq(voiceAgentEndedCalls.callId, callId), gt(voiceAgentEndedCalls.expiresAt, sql`now()`)))
    .limit(1);
  return row !== undefined;
}
