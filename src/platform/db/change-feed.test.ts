// The row change feed on the run's database (PGlite, or the server with TEST_DATABASE_URL): committed
// changes of users, twins, memberships and assistants are heard as "<table>:<key>", rolled-back ones are
// not; a fence keeps `caughtUp` false until its notice is back, a catch-up only waits for it; a lost
// listening connection says "forget everything" and listens again.
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAssistant } from '../../../test/support/assistants.js';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildTwin, buildUser } from '../../../test/support/factories.js';
import { users } from '../../modules/users/users.tables.js';
import { openChangeFeed, type ChangeFeed, type RowChange } from './change-feed.js';
import { until } from '../../../test/support/until.js';

let database: TestDatabase;
let feed: ChangeFeed;
const heard: RowChange[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  feed = await openChangeFeed(database);
  feed.subscribe((change) => heard.push(change));
});
afterAll(async () => {
  await feed?.close();
  await database?.close();
});

const wasHeard = (table: string, key: string) => heard.some((change) => change.table === table && change.key === key);

describe('the row change feed', () => {
  it('hears committed changes of users, twins, memberships and assistants by their key', async () => {
    const twin = await buildTwin(database.db);
    const { user } = await buildUser(database.db, { twin });
    const assistant = await buildAssistant(database.db, { twinId: twin.id });
    await until(() => wasHeard('institutions', twin.id) && wasHeard('users', user.id) && wasHeard('memberships', user.id) && wasHeard('assistants', assistant.id));
    heard.length = 0;
    await database.db.update(users).set({ fname: 'Renamed' }).where(eq(users.id, user.id));
    await until(() => wasHeard('users', user.id));
  });

  it('hears nothing of a transaction that rolled back', async () => {
    const { user } = await buildUser(database.db, { twin: null });
    await until(() => wasHeard('users', user.id));
    heard.length = 0;
    await expect(
      database.db.transaction(async (tx) => {
        await tx.update(users).set({ fname: 'Never' }).where(eq(users.id, user.id));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // A later change proves the feed is live and ordered: only it is heard.
    const { user: other } = await buildUser(database.db, { twin: null });
    await until(() => wasHeard('users', other.id));
    expect(wasHeard('users', user.id)).toBe(false);
  });

  it("hears a balance's change of credits or of anything else, never of its holds alone (a turn's hold)", async () => {
    const twin = await buildTwin(database.db);
    const { user } = await buildUser(database.db, { twin, credits: 10 });
    const { user: marker } = await buildUser(database.db, { twin: null });
    await until(() => wasHeard('users', marker.id));
    const changes: Array<[string, string, string]> = [
      ['users', user.id, `update users set credits_held = credits_held + 1.5 where id = $1`],
      ['users', user.id, `update users set credits = credits - 1, credits_held = credits_held - 1.5 where id = $1`],
      ['users', user.id, `update users set fname = 'Renamed', credits_held = credits_held + 2 where id = $1`],
      ['users', user.id, `update users set credits_held = credits_held where id = $1`],
      ['institutions', twin.id, `update institutions set credits_held = credits_held + 3 where id = $1`],
      ['institutions', twin.id, `update institutions set credits = credits + 5 where id = $1`],
    ];
    const notified: boolean[] = [];
    for (const [table, key, text] of changes) {
      heard.length = 0;
      await database.executeSql(text, [key]);
      // Notices come in commit order: once a later change of another row is heard, this one's would have been.
      await database.db.update(users).set({ fname: `Marker ${notified.length}` }).where(eq(users.id, marker.id));
      await until(() => wasHeard('users', marker.id));
      notified.push(wasHeard(table, key));
    }
    expect(notified).toEqual([false, true, true, false, false, true]);
  });

  it('tells its listeners of a change this process says it committed at once, and stays caught up', async () => {
    await until(() => feed.caughtUp);
    heard.length = 0;
    feed.committed({ table: 'users', key: 'u-told' });
    expect(heard).toEqual([{ table: 'users', key: 'u-told' }]);
    expect(feed.caughtUp).toBe(true);
  });

  it('is not caught up after a fence until its notice is back (a server delivers notices later)', async () => {
    expect(feed.caughtUp).toBe(true);
    feed.fence();
    feed.fence();
    // PGlite delivers a notice before the commit resolves: nothing to wait for there.
    expect(feed.caughtUp).toBe(database.kind === 'pglite');
    await until(() => feed.caughtUp);
  });

  it('catches up with every change committed before it, while staying caught up (caches keep serving)', async () => {
    const { user } = await buildUser(database.db, { twin: null });
    await until(() => feed.caughtUp && wasHeard('users', user.id));
    heard.length = 0;
    await database.db.update(users).set({ fname: 'Caught' }).where(eq(users.id, user.id));
    const caught = Promise.all([feed.catchUp(), feed.catchUp(), feed.catchUp()]);
    expect(feed.caughtUp).toBe(true);
    await caught;
    expect(wasHeard('users', user.id)).toBe(true);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('says "forget everything" when its connection is lost, and listens again', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      heard.length = 0;
      const { rows } = await admin.query(`select pg_terminate_backend(pid) as done from pg_stat_activity where datname = current_database() and query ilike 'listen%'`);
      expect(rows.length).toBeGreaterThan(0);
      await until(() => wasHeard('*', '*'));
      // Back within the reconnect interval: a change made now is heard.
      await until(() => feed.caughtUp);
      const { user } = await buildUser(database.db, { twin: null });
      await until(() => wasHeard('users', user.id));
    } finally {
      await admin.end();
    }
  });
});
