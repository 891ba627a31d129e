// Test helpers of the assistants family: assistants with overrides, and the Actor a signed-in person
// would have (built from the database the same way the auth guard builds it, or plainly for code that
// never reads the database).
import type { Database } from '../../src/platform/db/client.js';
import type { Actor } from '../../src/platform/http/actor.js';
import { findMembership } from '../../src/modules/twins/twins.repo.js';
import { insertAssistant } from '../../src/modules/assistants/assistants.repo.js';
import type { AssistantRow, NewAssistant } from '../../src/modules/assistants/assistants.tables.js';
import { permissionsFor } from '../../src/platform/http/permissions.js';
import { findUserById } from '../../src/modules/users/users.repo.js';

let sequence = 0;

export function buildAssistant(db: Database, overrides: Partial<NewAssistant> = {}): Promise<AssistantRow> {
  return insertAssistant(db, { name: `Assistant ${++sequence}`, instructions: 'Be helpful.', ...overrides });
}

export async function actorFor(db: Database, userId: string): Promise<Actor> {
  const user = await findUserById(db, userId);
  if (!user) throw new Error(`no user ${userId}`);
  const membership = user.currentTwinId ? await findMembership(db, user.id, user.currentTwinId) : undefined;
  return {
    userId: user.id,
    sessionId: 'test-session',
    email: user.email,
    accountType: user.accountType,
    twinId: user.currentTwinId,
    role: membership?.role ?? null,
    permissions: permissionsFor(user.accountType, membership?.role, membership?.permissions ?? []),
    launchScope: null,
    mustChangePassword: false,
  };
}

/** A plain person's Actor in a twin of its own, for code under test that reads no database. */
export function plainActor(userId: string, overrides: Partial<Actor> = {}): Actor {
  return {
    userId,
    sessionId: `session-of-${userId}`,
    email: `${userId}@example.test`,
    accountType: 'user',
    twinId: `twin-of-${userId}`,
    role: 'user',
    permissions: [],
    launchScope: null,
    mustChangePassword: false,
    ...overrides,
  };
}
