// First start: with ADMIN_EMAIL and ADMIN_PASSWORD on a database with no user, create the super admin
// and a first twin named "Default Twin" with the admin as its member and current twin, in one transaction.
import { sql } from 'drizzle-orm';
import type { Database } from './platform/db/client.js';
import { withTransaction } from './platform/db/client.js';
import { insertTwin, insertMembership } from './modules/twins/twins.repo.js';
import { hashPassword } from './platform/crypto/passwords.js';
import { insertAccount } from './modules/credits/starting-credits.js';
import { countUsers, updateUser } from './modules/users/users.repo.js';

export const DEFAULT_TWIN_NAME = 'Default Twin';

export async function bootstrapFirstAdmin(
  db: Database,
  admin: { email: string; password: string } | undefined,
  startingCredits = 0,
): Promise<{ created: boolean; userId?: string; twinId?: string }> {
  if (!admin) return { created: false };
  // Every start after the first ends here, before the password's hash (tens of ms and ~19 MB of memory).
  if ((await countUsers(db)) > 0) return { created: false };
  const passwordHash = await hashPassword(admin.password);
  return withTransaction(db, async (tx) => {
    // Several processes may start at once on one server: the lock makes the check-then-create atomic.
    await tx.execute(sql`select pg_advisory_xact_lock(7240263)`);
    if ((await countUsers(tx)) > 0) return { created: false };
    const user = await insertAccount(tx, { email: admin.email, passwordHash, accountType: 'super', fname: 'Admin' }, startingCredits);
    const twin = await insertTwin(tx, { name: DEFAULT_TWIN_NAME, ainame: 'Digital Twin' });
    await insertMembership(tx, { twinId: twin.id, userId: user.id, role: 'admin' });
    await updateUser(tx, user.id, { currentTwinId: twin.id });
    return { created: true, userId: user.id, twinId: twin.id };
  });
}
