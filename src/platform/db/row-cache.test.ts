// The row cache on the run's database and its real change feed: a row is read once and served until
// it changes (written by this process or, through the notices, by another), a change to another row or
// table keeps it, a fill a change overtook is not kept, what this process says it committed drops at
// once, nothing is served while a fence is out, entries expire, and a row not found is not kept. An entry
// may hang on several tables: by its key (a person's rows), by the rows it names (a profile's twin and
// favorites), or on every other table (forget everything).
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildTwin } from '../../../test/support/factories.js';
import { until } from '../../../test/support/until.js';
import { findTwinById } from '../../modules/twins/twins.repo.js';
import { twins, type TwinRow } from '../../modules/twins/twins.tables.js';
import { openChangeFeed, type ChangeFeed, type RowChange } from './change-feed.js';
import { createRowCache } from './row-cache.js';

let database: TestDatabase;
let feed: ChangeFeed;
/** Another process's connection: what it commits reaches the feed only through the notices. */
let elsewhere: pg.Pool | undefined;
const heard: RowChange[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  feed = await openChangeFeed(database);
  feed.subscribe((change) => heard.push(change));
  if (database.url) elsewhere = new pg.Pool({ connectionString: database.url, max: 1 });
});
afterAll(async () => {
  await elsewhere?.end();
  await feed?.close();
  await database?.close();
});

/** Renames a twin as another process would (on PGlite, through the one connection there is). */
async function renameElsewhere(id: string, name: string): Promise<void> {
  if (elsewhere) await elsewhere.query('update institutions set name = $1 where id = $2', [name, id]);
  else await database.executeSql('update institutions set name = $1 where id = $2', [name, id]);
  await until(() => heard.some((change) => change.table === 'institutions' && change.key === id));
}

/** A new twin whose notice has been heard (else it could overtake the first fill of that twin). */
async function newTwin(values: Parameters<typeof buildTwin>[1] = {}): Promise<TwinRow> {
  const twin = await buildTwin(database.db, values);
  await until(() => heard.some((change) => change.table === 'institutions' && change.key === twin.id));
  return twin;
}

/** A twin cache that counts its reads of the database. */
function twinCache(options: { now?: () => number } = {}) {
  const reads: string[] = [];
  const cache = createRowCache<TwinRow>(feed, { keyTables: ['institutions'], ttlMs: 1_000, ...options });
  const get = (id: string) =>
    cache.get(id, async () => {
      reads.push(id);
      return findTwinById(database.db, id);
    });
  return { cache, get, reads };
}

describe('the row cache', () => {
  it('reads a row once and serves it until the row changes in another process', async () => {
    const twin = await newTwin({ name: 'Alpha' });
    const { get, reads } = twinCache();
    expect((await get(twin.id))?.name).toBe('Alpha');
    expect((await get(twin.id))?.name).toBe('Alpha');
    expect(reads).toHaveLength(1);

    heard.length = 0;
    await renameElsewhere(twin.id, 'Alpha renamed');
    expect((await get(twin.id))?.name).toBe('Alpha renamed');
    expect(reads).toHaveLength(2);
  });

  it('keeps a row when another row of its table or another table changes', async () => {
    const [a, b] = [await newTwin(), await newTwin()];
    const { get, reads } = twinCache();
    await get(a.id);
    heard.length = 0;
    await renameElsewhere(b.id, 'Other');
    feed.committed({ table: 'users', key: a.id });
    await get(a.id);
    expect(reads).toEqual([a.id]);
  });

  it('drops a row at once when this process says it committed a change to it', async () => {
    const twin = await newTwin({ name: 'Before' });
    const { get, reads } = twinCache();
    await get(twin.id);
    await database.db.update(twins).set({ name: 'After' }).where(eq(twins.id, twin.id));
    feed.committed({ table: 'institutions', key: twin.id });
    expect((await get(twin.id))?.name).toBe('After');
    expect(reads).toHaveLength(2);
  });

  it('forgets everything when told changes may have been missed', async () => {
    const twin = await newTwin();
    const { cache, get } = twinCache();
    await get(twin.id);
    expect(cache.size).toBe(1);
    feed.committed({ table: '*', key: '*' });
    expect(cache.size).toBe(0);
  });

  it('does not keep a fill that a change overtook', async () => {
    const twin = await newTwin({ name: 'Old' });
    const cache = createRowCache<TwinRow>(feed, { keyTables: ['institutions'] });
    // The fill reads the old row, then the change is heard before the fill is done.
    const stale = await cache.get(twin.id, async () => {
      const row = await findTwinById(database.db, twin.id);
      feed.committed({ table: 'institutions', key: twin.id });
      return row;
    });
    expect(stale?.name).toBe('Old');
    expect(cache.size).toBe(0);
  });

  it('keeps a fill that only a change of another row came during; under a name, any change of the table overtakes it', async () => {
    const [twin, other] = [await newTwin(), await newTwin()];
    const byId = createRowCache<TwinRow>(feed, { keyTables: ['institutions'] });
    await byId.get(twin.id, async () => {
      feed.committed({ table: 'institutions', key: other.id });
      return findTwinById(database.db, twin.id);
    });
    expect(byId.size).toBe(1);
    const named = createRowCache<TwinRow>(feed, { dependsOn: { institutions: (row) => [row.id] } });
    await named.get('first', async () => {
      feed.committed({ table: 'institutions', key: other.id });
      return findTwinById(database.db, twin.id);
    });
    expect(named.size).toBe(0);
  });

  it('drops an entry on a notice of any of its key tables, and only such a notice of its key overtakes its fill', async () => {
    const cache = createRowCache<{ json: string }>(feed, { keyTables: ['users', 'memberships'] });
    await cache.get('u-1', async () => ({ json: 'one' }));
    await cache.get('u-2', async () => ({ json: 'two' }));
    feed.committed({ table: 'memberships', key: 'u-1' });
    expect(cache.size).toBe(1);
    await cache.get('u-1', async () => {
      feed.committed({ table: 'users', key: 'u-2' });
      return { json: 'one again' };
    });
    expect(cache.size).toBe(1);
    await cache.get('u-2', async () => {
      feed.committed({ table: 'memberships', key: 'u-2' });
      return { json: 'two again' };
    });
    expect(cache.size).toBe(1);
    expect(await cache.get('u-1', async () => ({ json: 'not read' }))).toEqual({ json: 'one again' });
  });

  it('drops the entries whose row names a changed row of a table they depend on, and any such change overtakes a fill', async () => {
    type Profile = { json: string; twin: string | null; favorites: string[] };
    const cache = createRowCache<Profile>(feed, { keyTables: ['users'], dependsOn: { institutions: (row) => [row.twin], assistants: (row) => row.favorites } });
    await cache.get('member', async () => ({ json: 'm', twin: 't-1', favorites: [] }));
    await cache.get('fan', async () => ({ json: 'f', twin: null, favorites: ['a-1', 'a-2'] }));
    await cache.get('other', async () => ({ json: 'o', twin: 't-2', favorites: ['a-3'] }));
    feed.committed({ table: 'institutions', key: 't-1' });
    expect(cache.size).toBe(2);
    feed.committed({ table: 'assistants', key: 'a-2' });
    expect(cache.size).toBe(1);
    // What a fill will name is not known before it is done: a change of any twin overtakes it.
    await cache.get('member', async () => {
      feed.committed({ table: 'institutions', key: 't-9' });
      return { json: 'm', twin: 't-1', favorites: [] };
    });
    expect(cache.size).toBe(1);
    expect((await cache.get('other', async () => ({ json: 'not read', twin: null, favorites: [] }))).json).toBe('o');
  });

  it('ignores notices of tables it does not name, or forgets everything on them when asked to', async () => {
    const ignoring = createRowCache<{ json: string }>(feed, { keyTables: ['users'] });
    const forgetting = createRowCache<{ json: string }>(feed, { keyTables: ['users'], forgetOnOtherTables: true });
    await ignoring.get('u-1', async () => ({ json: 'one' }));
    await forgetting.get('u-1', async () => ({ json: 'one' }));
    await forgetting.get('u-2', async () => {
      feed.committed({ table: 'files', key: 'f-1' });
      return { json: 'two' };
    });
    expect(ignoring.size).toBe(1);
    expect(forgetting.size).toBe(0);
  });

  it('peeks at once at what get would serve without a fill, and at nothing else', async () => {
    const twin = await newTwin({ name: 'Peeked' });
    let clock = 0;
    const { cache, get } = twinCache({ now: () => clock });
    expect(cache.peek(twin.id)).toBeUndefined();
    await get(twin.id);
    expect(cache.peek(twin.id)?.name).toBe('Peeked');
    heard.length = 0;
    await renameElsewhere(twin.id, 'Renamed');
    expect(cache.peek(twin.id)).toBeUndefined();
    await get(twin.id);
    clock = 1_000;
    expect(cache.peek(twin.id)).toBeUndefined();
  });

  it('does not keep a row that was not found', async () => {
    const { cache, get, reads } = twinCache();
    expect(await get('0123456789abcdef01234567')).toBeUndefined();
    expect(await get('0123456789abcdef01234567')).toBeUndefined();
    expect(reads).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it('reads again once an entry is older than its time to live', async () => {
    const twin = await newTwin();
    let clock = 0;
    const { get, reads } = twinCache({ now: () => clock });
    await get(twin.id);
    clock = 999;
    await get(twin.id);
    expect(reads).toHaveLength(1);
    clock = 1_000;
    await get(twin.id);
    expect(reads).toHaveLength(2);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('serves nothing while a fence of this process is out', async () => {
    const twin = await newTwin();
    const { get, reads } = twinCache();
    await get(twin.id);
    feed.fence();
    await get(twin.id);
    expect(reads).toHaveLength(2);
    await until(() => feed.caughtUp);
    await get(twin.id);
    expect(reads).toHaveLength(2);
  });
  it('reads a key once for every request that misses it while its read runs; a change during the read makes later requests read again', async () => {
    const twin = await newTwin({ name: 'Before' });
    const { get, reads } = twinCache();
    const together = await Promise.all([get(twin.id), get(twin.id), get(twin.id)]);
    expect(together.map((row) => row?.name)).toEqual(['Before', 'Before', 'Before']);
    expect(reads).toEqual([twin.id]);

    const cache = createRowCache<{ name: string }>(feed, { keyTables: ['users'] });
    let release = () => {};
    const first = cache.get('u-9', () => new Promise<{ name: string }>((resolve) => (release = () => resolve({ name: 'old' }))));
    const sharing = cache.get('u-9', async () => ({ name: 'not read' }));
    feed.committed({ table: 'users', key: 'u-9' });
    await until(() => feed.caughtUp);
    const after = cache.get('u-9', async () => ({ name: 'new' }));
    release();
    expect([(await first).name, (await sharing).name, (await after).name]).toEqual(['old', 'old', 'new']);
    expect(await cache.get('u-9', async () => ({ name: 'not read' }))).toEqual({ name: 'new' });
  });
});
