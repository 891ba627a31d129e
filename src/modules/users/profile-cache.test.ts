// The refreshed profile comes from a per-process cache, and is never stale: a change of the person, a
// membership, the twin or a favorite assistant shows on the next refresh, whether this process wrote
// it (fenced) or another one did (heard through row change notices). The cache's own rules: a fill
// overtaken by a change is not kept, nothing is served while a fence is out, entries expire.
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAssistant } from '../../../test/support/assistants.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { openChangeFeed, type ChangeFeed } from '../../platform/db/change-feed.js';
import { assistants } from '../assistants/assistants.tables.js';
import { twins, memberships } from '../twins/twins.tables.js';
import { createProfileCache, ENTRY_TTL_MS } from './profile-cache.js';
import { users } from './users.tables.js';
import { until } from '../../../test/support/until.js';

let t: TestApp;
/** Another process's connection: what it commits reaches this one only through the notices. */
let elsewhere: pg.Pool | undefined;

beforeAll(async () => {
  t = await startTestApp();
  if (t.platform.database.url) elsewhere = new pg.Pool({ connectionString: t.platform.database.url, max: 1 });
});
afterAll(async () => {
  await elsewhere?.end();
  await t?.close();
});

const db = () => t.platform.database.db;

async function refresh(token: string): Promise<Record<string, any>> {
  const response = await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': token } });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  return response.json().profile;
}

/** Writes as another process would (on PGlite, the one connection there is). */
async function writeElsewhere(text: string, values: unknown[]): Promise<void> {
  if (elsewhere) await elsewhere.query(text, values);
  else await t.platform.database.executeSql(text, values);
}

describe('the refreshed profile and its cache', () => {
  it('shows a change made through the API on the very next refresh', async () => {
    const { user } = await buildUser(db());
    const token = await signIn(t.app, user.email);
    expect((await refresh(token)).dark_mode).toBe(false);
    const saved = await t.app.inject({ method: 'PUT', url: '/api/user/setting', headers: { 'x-access-token': token }, payload: { dark_mode: true } });
    expect(saved.statusCode).toBe(200);
    expect((await refresh(token)).dark_mode).toBe(true);
  });

  it('sends a name outside Latin-1 whole, from the fill and from the cache, its length counted in bytes', async () => {
    const { user } = await buildUser(db(), { fname: 'Zoë', lname: 'Ωmega 🙂' });
    const token = await signIn(t.app, user.email);
    const answers = [];
    for (let i = 0; i < 2; i++) {
      const response = await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': token } });
      expect(response.statusCode).toBe(200);
      expect(Number(response.headers['content-length'])).toBe(response.rawPayload.length);
      expect(response.json().profile).toMatchObject({ fname: 'Zoë', lname: 'Ωmega 🙂' });
      answers.push(response.body);
    }
    expect(answers[1]).toBe(answers[0]);
  });

  it('answers repeated refreshes from the cache: a write that sends no notice stays unseen', async () => {
    const { user } = await buildUser(db());
    const token = await signIn(t.app, user.email);
    expect((await refresh(token)).lname).toBe('Person');
    // Notices of the set-up writes have long arrived (a server delivers them within milliseconds): this
    // refresh leaves an entry no earlier change can still drop.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await refresh(token)).lname).toBe('Person');
    // Triggers off (replica role) means no notice: only a profile read from the database would show it.
    await t.platform.database.executeSql(
      `begin; set local session_replication_role = replica; update users set lname = 'Unseen' where id = '${user.id}'; commit;`,
    );
    expect((await refresh(token)).lname).toBe('Person');
    // The next change that does send a notice brings the profile up to date, the silent change included.
    await writeElsewhere('update users set fname = $1 where id = $2', ['Noticed', user.id]);
    await until(async () => (await refresh(token)).fname === 'Noticed');
    expect((await refresh(token)).lname).toBe('Unseen');
  });

  it('shows a change another process made to the person', async () => {
    const { user } = await buildUser(db());
    const token = await signIn(t.app, user.email);
    expect((await refresh(token)).fname).toBe('Test');
    await writeElsewhere('update users set fname = $1 where id = $2', ['Grace', user.id]);
    await until(async () => (await refresh(token)).fname === 'Grace');
  });

  it("shows a twin's change to every member", async () => {
    const twin = await buildTwin(db(), { name: 'Before' });
    const people = await Promise.all([buildUser(db(), { twin }), buildUser(db(), { twin })]);
    const tokens = await Promise.all(people.map(({ user }) => signIn(t.app, user.email)));
    for (const token of tokens) expect((await refresh(token)).institution.name).toBe('Before');
    await writeElsewhere('update institutions set name = $1 where id = $2', ['After', twin.id]);
    for (const token of tokens) await until(async () => (await refresh(token)).institution.name === 'After');
  });

  it('shows a new role in the permissions', async () => {
    const { user, membership } = await buildUser(db());
    const token = await signIn(t.app, user.email);
    expect((await refresh(token)).permissions).toEqual([]);
    await writeElsewhere('update memberships set role = $1 where id = $2', ['admin', membership!.id]);
    await until(async () => (await refresh(token)).permissions.includes('users.list'));
  });

  it('shows a favorite assistant renamed', async () => {
    const twin = await buildTwin(db());
    const { user } = await buildUser(db(), { twin });
    const token = await signIn(t.app, user.email);
    const shared = await buildAssistant(db(), { twinId: twin.id, twinShared: true, name: 'Tutor' });
    const added = await t.app.inject({ method: 'POST', url: `/api/user/favoriteAssistants/${shared.id}`, headers: { 'x-access-token': token } });
    expect(added.statusCode).toBe(200);
    expect((await refresh(token)).favoriteAssistants.map((a: { name: string }) => a.name)).toEqual(['Tutor']);
    await writeElsewhere('update assistants set name = $1 where id = $2', ['Math Tutor', shared.id]);
    await until(async () => (await refresh(token)).favoriteAssistants[0]?.name === 'Math Tutor');
  });
});

describe('createProfileCache', () => {
  let feed: ChangeFeed;
  beforeAll(async () => {
    feed = await openChangeFeed(t.platform.database);
  });
  afterAll(() => feed?.close());

  /** Every change committed so far has been heard (a fence comes back after them, in commit order). */
  async function quiet(): Promise<void> {
    feed.fence();
    await until(async () => feed.caughtUp);
  }

  const filler = (json: string) => {
    let calls = 0;
    const fill = async () => {
      calls += 1;
      return { body: json, twinId: null, favoriteIds: [] };
    };
    return { fill, calls: () => calls };
  };

  it('answers a second read from the cache, and reads again after a change to the person', async () => {
    const { user } = await buildUser(db(), { twin: null });
    await quiet();
    const cache = createProfileCache(feed);
    const source = filler('{"v":1}');
    expect(await cache.get(user.id, source.fill)).toBe('{"v":1}');
    expect(await cache.get(user.id, source.fill)).toBe('{"v":1}');
    expect(source.calls()).toBe(1);
    await db().update(users).set({ fname: 'Changed' }).where(eq(users.id, user.id));
    await until(async () => (await cache.get(user.id, source.fill), source.calls() === 2));
  });

  it('does not keep a fill that a change overtook', async () => {
    const { user } = await buildUser(db(), { twin: null });
    await quiet();
    const cache = createProfileCache(feed);
    let heardChange = false;
    const off = feed.subscribe((change) => (heardChange ||= change.table === 'users' && change.key === user.id));
    let calls = 0;
    const fill = async () => {
      calls += 1;
      if (calls === 1) {
        // This fill has read the row; a change commits and is heard before the fill comes back.
        await db().update(users).set({ fname: 'Overtaking' }).where(eq(users.id, user.id));
        await until(async () => heardChange);
      }
      return { body: `{"fill":${calls}}`, twinId: null, favoriteIds: [] };
    };
    try {
      expect(await cache.get(user.id, fill)).toBe('{"fill":1}');
      expect(await cache.get(user.id, fill)).toBe('{"fill":2}');
      expect(await cache.get(user.id, fill)).toBe('{"fill":2}');
    } finally {
      off();
    }
  });

  it("drops the twin's members on a change of the twin and a favorite's holders on a change of the assistant", async () => {
    const twin = await buildTwin(db());
    const assistant = await buildAssistant(db(), { twinId: twin.id });
    await quiet();
    const cache = createProfileCache(feed);
    await cache.get('member', async () => ({ body: 'm', twinId: twin.id, favoriteIds: [] }));
    await cache.get('fan', async () => ({ body: 'f', twinId: null, favoriteIds: [assistant.id] }));
    await cache.get('other', async () => ({ body: 'o', twinId: null, favoriteIds: [] }));
    expect(cache.size).toBe(3);
    await db().update(twins).set({ name: 'Renamed' }).where(eq(twins.id, twin.id));
    await until(async () => cache.size === 2);
    await db().update(assistants).set({ name: 'Renamed' }).where(eq(assistants.id, assistant.id));
    await until(async () => cache.size === 1);
    expect(await cache.get('other', async () => ({ body: 'refilled', twinId: null, favoriteIds: [] }))).toBe('o');
  });

  it.runIf(process.env.TEST_DATABASE_URL)('serves nothing while a fence of this process is out', async () => {
    const cache = createProfileCache(feed);
    const source = filler('{"v":1}');
    await quiet();
    await cache.get('someone', source.fill);
    feed.fence();
    await cache.get('someone', source.fill);
    expect(source.calls()).toBe(2);
    await until(async () => feed.caughtUp);
    await cache.get('someone', source.fill);
    expect(source.calls()).toBe(2);
  });

  it('lets an entry live at most ENTRY_TTL_MS', async () => {
    let clock = 1_000;
    const cache = createProfileCache(feed, () => clock);
    const source = filler('{}');
    await cache.get('someone', source.fill);
    clock += ENTRY_TTL_MS - 1;
    await cache.get('someone', source.fill);
    expect(source.calls()).toBe(1);
    clock += 1;
    await cache.get('someone', source.fill);
    expect(source.calls()).toBe(2);
  });

  it('forgets a membership change of the person', async () => {
    const { user, membership } = await buildUser(db());
    await quiet();
    const cache = createProfileCache(feed);
    const source = filler('{}');
    await cache.get(user.id, source.fill);
    await db().update(memberships).set({ role: 'admin' }).where(eq(memberships.id, membership!.id));
    await until(async () => cache.size === 0);
  });
});
