// The hourly sweep of dead sign-in rows: sessions revoked or expired, pending two-step sign-ins,
// password-reset links, launch tokens and provider states go once their end is 30 days past (not
// before), embed guidance goes as soon as its session can take no turn; live ones stay and still work.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleJobs } from '../../jobs.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { embedGuidance } from '../embed/embed.tables.js';
import { oauthStates } from '../oauth/oauth.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';
import { EXPIRED_ROWS_CRON, EXPIRED_ROWS_JOB, EXPIRED_ROWS_KEEP_DAYS } from './expired-rows.job.js';
import { launchTokens, mfaChallenges, passwordResets } from './identity.tables.js';
import { sessions } from './sessions.tables.js';

let t: TestApp;
let twin: TwinRow;
let person: { id: string; email: string };
const db = () => t.platform.database.db;
const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);
const DUE = EXPIRED_ROWS_KEEP_DAYS + 1;
const KEPT = EXPIRED_ROWS_KEEP_DAYS - 1;
const hash = () => randomBytes(16).toString('hex');

beforeAll(async () => {
  t = await startTestApp({ workers: true });
  twin = await buildTwin(db());
  const built = await buildUser(db(), { twin });
  person = { id: built.user.id, email: built.user.email };
});
afterAll(async () => {
  await t?.close();
});

async function session(values: { expiresAt: Date; revokedAt?: Date; kind?: 'full' | 'visitor' }): Promise<string> {
  const [row] = await db()
    .insert(sessions)
    .values({ userId: person.id, twinId: twin.id, kind: values.kind ?? 'full', expiresAt: values.expiresAt, revokedAt: values.revokedAt ?? null })
    .returning({ id: sessions.id });
  return row!.id;
}

/** Which of `ids` are still in `table`. */
async function surviving(table: string, ids: string[]): Promise<string[]> {
  const { rows } = await t.platform.database.executeSql(`select id from ${table} where id = any($1)`, [ids]);
  return rows.map((row: { id: string }) => row.id).sort();
}

describe(`the ${EXPIRED_ROWS_JOB} job`, () => {
  it('deletes what has been dead for 30 days and the guidance no session can take; keeps the rest, and a live session still works', async () => {
    const token = await signIn(t.app, person.email);
    const live = {
      session: await session({ expiresAt: new Date(Date.now() + DAY), kind: 'visitor' }),
      expiredLately: await session({ expiresAt: daysAgo(KEPT) }),
      revokedLately: await session({ expiresAt: new Date(Date.now() + DAY), revokedAt: daysAgo(KEPT) }),
    };
    const dead = {
      expired: await session({ expiresAt: daysAgo(DUE) }),
      revoked: await session({ expiresAt: new Date(Date.now() + DAY), revokedAt: daysAgo(DUE) }),
    };
    const challenge = (expiresAt: Date) => ({ userId: person.id, purpose: 'signin' as const, method: 'totp' as const, expiresAt });
    const challenges = await db().insert(mfaChallenges).values([challenge(daysAgo(DUE)), challenge(daysAgo(KEPT))]).returning({ id: mfaChallenges.id });
    const reset = (expiresAt: Date) => ({ userId: person.id, tokenHash: hash(), expiresAt });
    const resets = await db().insert(passwordResets).values([reset(daysAgo(DUE)), reset(daysAgo(KEPT))]).returning({ id: passwordResets.id });
    const launch = (expiresAt: Date) => ({ twinId: twin.id, tokenHash: hash(), email: person.email, createdBy: person.id, expiresAt });
    const launches = await db().insert(launchTokens).values([launch(daysAgo(DUE)), launch(daysAgo(KEPT))]).returning({ id: launchTokens.id });
    const state = (expiresAt: Date) => ({ provider: 'campus', stateHash: hash(), bindingHash: hash(), nonce: hash(), codeVerifier: hash(), expiresAt });
    const states = await db().insert(oauthStates).values([state(daysAgo(DUE)), state(daysAgo(KEPT))]).returning({ id: oauthStates.id });
    const guide = (sessionId: string) => ({ twinId: twin.id, sessionId, text: 'Ask about chapter two' });
    const guidance = await db()
      .insert(embedGuidance)
      .values([guide(live.session), guide(live.expiredLately), guide(live.revokedLately), guide('x'.repeat(24))])
      .returning({ id: embedGuidance.id });

    await t.platform.jobs.send(EXPIRED_ROWS_JOB, {});
    await t.platform.jobs.drain(EXPIRED_ROWS_JOB, 20_000);

    const all = [...Object.values(live), ...Object.values(dead)];
    expect(await surviving('sessions', all)).toEqual(Object.values(live).sort());
    expect(await surviving('mfa_challenges', challenges.map((row) => row.id))).toEqual([challenges[1]!.id]);
    expect(await surviving('password_resets', resets.map((row) => row.id))).toEqual([resets[1]!.id]);
    expect(await surviving('launch_tokens', launches.map((row) => row.id))).toEqual([launches[1]!.id]);
    expect(await surviving('oauth_states', states.map((row) => row.id))).toEqual([states[1]!.id]);
    // Only the guidance of the live session waits on; an expired, a revoked and a missing session's goes.
    expect(await surviving('embed_guidance', guidance.map((row) => row.id))).toEqual([guidance[0]!.id]);
    // The person's own session, live, was not touched.
    const me = await t.app.inject({ method: 'GET', url: '/api/user/history', headers: { 'x-access-token': token } });
    expect(me.statusCode).toBe(200);
  });

  it('refuses a malformed payload', async () => {
    await expect(t.platform.jobs.send(EXPIRED_ROWS_JOB, { batch: 'all' } as never)).rejects.toThrow();
  });

  it('is scheduled hourly', async () => {
    await scheduleJobs(t.platform.jobs, t.platform.database);
    const { rows } = await t.platform.database.executeSql('select cron, timezone from pgboss.schedule where name = $1', [EXPIRED_ROWS_JOB]);
    expect(rows).toEqual([{ cron: EXPIRED_ROWS_CRON, timezone: 'UTC' }]);
  });
});
