// Reads of the voice-agent calls: the twin a voice agent speaks for, and the person in that twin.
import { and, eq, isNull, notInArray } from 'drizzle-orm';
import type { Executor } from '../../platform/db/client.js';
import { memberships, twins } from '../twins/twins.tables.js';
import { users } from '../users/users.tables.js';

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
