// Factories with overrides: they create missing parents and make unique data.
import { randomBytes } from 'node:crypto';
import type { Database } from '../../src/platform/db/client.js';
import { hashPassword } from '../../src/platform/crypto/passwords.js';
import { insertTwin, insertMembership, type NewTwin } from '../../src/modules/twins/twins.repo.js';
import type { TwinRow, MembershipRow } from '../../src/modules/twins/twins.tables.js';
import { insertUser, updateUser, type NewUser } from '../../src/modules/users/users.repo.js';
import type { UserRow } from '../../src/modules/users/users.tables.js';
import type { App } from '../../src/platform/http/schemas.js';

export const DEFAULT_PASSWORD = 'correct horse battery staple';
let sequence = 0;
const unique = () => `${++sequence}${randomBytes(3).toString('hex')}`;
let cachedHash: Promise<string> | undefined;

export function buildTwin(db: Database, overrides: Partial<NewTwin> = {}): Promise<TwinRow> {
  return insertTwin(db, { name: `Twin ${unique()}`, ainame: 'Twin AI', ...overrides });
}

export interface BuiltUser {
  user: UserRow;
  twin: TwinRow | null;
  membership: MembershipRow | null;
  password: string;
}

/**
 * A person with a password, a member of `twin` (created when not given) with `role`,
 * and that twin as current. `twin: null` makes a person with no twin.
 */
export async function buildUser(
  db: Database,
  overrides: Partial<NewUser> & { password?: string; twin?: TwinRow | null; role?: 'user' | 'admin'; grants?: string[] } = {},
): Promise<BuiltUser> {
  const { password, twin: given, role = 'user', grants = [], ...fields } = overrides;
  const passwordHash = password ? await hashPassword(password) : await (cachedHash ??= hashPassword(DEFAULT_PASSWORD));
  const twin = given === undefined ? await buildTwin(db) : given;
  let user = await insertUser(db, { email: `person-${unique()}@example.test`, fname: 'Test', lname: 'Person', passwordHash, ...fields });
  let membership: MembershipRow | null = null;
  if (twin) {
    membership = await insertMembership(db, { twinId: twin.id, userId: user.id, role, permissions: grants });
    user = (await updateUser(db, user.id, { currentTwinId: twin.id }))!;
  }
  return { user, twin, membership, password: password ?? DEFAULT_PASSWORD };
}

/** Signs in through the real route and returns the token. */
export async function signIn(app: App, email: string, password = DEFAULT_PASSWORD): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email, password } });
  if (response.statusCode !== 200) throw new Error(`sign-in failed: ${response.statusCode} ${response.body}`);
  return response.json().token as string;
}
