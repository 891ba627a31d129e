// Credits: charges never overdraw under concurrency (on both databases), every change is in the ledger,
// and the free-credit award route of the spec.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn } from '../../../test/support/factories.js';
import { requester } from '../../../test/support/http.js';
import { findTwinById } from '../twins/twins.repo.js';
import { findUserById } from '../users/users.repo.js';
import { awardCredits, chargeCredits, InsufficientCreditsError } from './credits.service.js';
import { creditLedger } from './credits.tables.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
const db = () => t.platform.database.db;

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
});
afterAll(() => t.close());

async function settle(count: number, charge: () => Promise<unknown>) {
  const results = await Promise.allSettled(Array.from({ length: count }, charge));
  const applied = results.filter((r) => r.status === 'fulfilled').length;
  const refused = results.filter((r) => r.status === 'rejected' && r.reason instanceof InsufficientCreditsError).length;
  return { applied, refused };
}

describe('chargeCredits', () => {
  it('applies exactly 100 of 200 concurrent charges against a pooled balance of 100, leaving zero', async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 100 });
    const { user } = await buildUser(db(), { twin, credits: 1000 });
    const { applied, refused } = await settle(200, () =>
      chargeCredits(db(), { twinId: twin.id, userId: user.id, amount: 1, reason: 'conversation.turn' }),
    );
    expect({ applied, refused }).toEqual({ applied: 100, refused: 100 });
    const after = (await findTwinById(db(), twin.id))!;
    expect(after.credits).toBe(0);
    expect(after.creditsUsed).toBe(100);
    expect((await findUserById(db(), user.id))!.credits).toBe(1000);
    const ledger = await db().select().from(creditLedger).where(eq(creditLedger.twinId, twin.id));
    expect(ledger).toHaveLength(100);
    expect(new Set(ledger.map((row) => row.balanceAfter)).size).toBe(100);
    expect(ledger.every((row) => row.delta === -1 && row.account === 'institution' && row.userId === user.id)).toBe(true);
  });

  it("charges the person's own balance when the twin does not pool credits, also under concurrency", async () => {
    const twin = await buildTwin(db(), { poolCredits: false, credits: 5000 });
    const { user } = await buildUser(db(), { twin, credits: 100 });
    const { applied } = await settle(200, () => chargeCredits(db(), { twinId: twin.id, userId: user.id, amount: 1, reason: 'conversation.turn' }));
    expect(applied).toBe(100);
    expect((await findUserById(db(), user.id))!).toMatchObject({ credits: 0, creditsUsed: 100 });
    expect((await findTwinById(db(), twin.id))!.credits).toBe(5000);
  });

  it('refuses a charge the balance cannot cover with a coded 402, changing nothing', async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 2.5 });
    const { user } = await buildUser(db(), { twin });
    const refusal = await chargeCredits(db(), { twinId: twin.id, userId: user.id, amount: 3, reason: 'x' }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(InsufficientCreditsError);
    expect(refusal).toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
    expect((await findTwinById(db(), twin.id))!.credits).toBe(2.5);
    const ok = await chargeCredits(db(), { twinId: twin.id, userId: user.id, amount: 2.5, reason: 'x' });
    expect(ok).toMatchObject({ account: 'institution', balance: 0 });
    await expect(chargeCredits(db(), { twinId: twin.id, userId: user.id, amount: 0, reason: 'x' })).rejects.toMatchObject({ status: 400 });
  });

  it('runs inside a caller\'s transaction and rolls back with it', async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 10 });
    const { user } = await buildUser(db(), { twin });
    await expect(
      db().transaction(async (tx) => {
        await chargeCredits(tx, { twinId: twin.id, userId: user.id, amount: 4, reason: 'x' });
        throw new Error('turn failed');
      }),
    ).rejects.toThrow('turn failed');
    expect((await findTwinById(db(), twin.id))!.credits).toBe(10);
    await awardCredits(db(), { account: 'user', twinId: twin.id, userId: user.id, amount: 3, reason: 'gift' });
    expect((await findUserById(db(), user.id))!.credits).toBe(3);
  });

  it("leaves a caller's transaction usable after a refused charge, and charges the account it is told", async () => {
    const twin = await buildTwin(db(), { poolCredits: true, credits: 10 });
    const { user } = await buildUser(db(), { twin, credits: 5 });
    const refusal = await db().transaction(async (tx) => {
      const refused = await chargeCredits(tx, { twinId: twin.id, userId: user.id, amount: 50, reason: 'x' }).catch((e: unknown) => e);
      // The same transaction goes on: the told account (the person's, though the twin pools) pays.
      await chargeCredits(tx, { twinId: twin.id, account: 'user', userId: user.id, amount: 2, reason: 'y' });
      return refused;
    });
    expect(refusal).toBeInstanceOf(InsufficientCreditsError);
    expect((await findTwinById(db(), twin.id))!.credits).toBe(10);
    expect((await findUserById(db(), user.id))!.credits).toBe(3);
    const entries = await db().select().from(creditLedger).where(eq(creditLedger.userId, user.id));
    expect(entries.map((entry) => [entry.account, entry.delta, entry.reason])).toEqual([['user', -2, 'y']]);
  });
});

describe('PUT /api/admin/freeInstitutionCreditsById/{id}', () => {
  it('lets a super admin award free credits, recorded in creditAward and the ledger', async () => {
    const twin = await buildTwin(db(), { credits: 10, name: 'Awarded Twin' });
    const sup = await buildUser(db(), { twin, accountType: 'super' });
    const token = await signIn(t.app, sup.user.email);
    const response = await req(token, 'PUT', `/api/admin/freeInstitutionCreditsById/${twin.id}`, { credits: 40 });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: 'Awarded 40 free credits to Awarded Twin; balance 50' });
    const after = (await findTwinById(db(), twin.id))!;
    expect(after).toMatchObject({ credits: 50, creditAward: 40 });

    const profile = await req(token, 'POST', '/api/user/refresh/profile', {});
    expect(profile.body.profile.institution).toMatchObject({ credits: 50, creditAward: 40, creditsTotal: 50, creditsUsagePct: 0 });

    const ledger = await req(token, 'GET', `/api/admin/institution/${twin.id}/credits/ledger`);
    expect(ledger.body).toMatchObject({ success: true, total: 1, data: [{ delta: 40, balanceAfter: 50, reason: 'admin.free_award', actor: sup.user.id }] });
  });

  it('refuses twin admins (403), unknown twins (404), bad amounts and ids (400)', async () => {
    const twin = await buildTwin(db());
    const admin = await buildUser(db(), { twin, role: 'admin' });
    const sup = await buildUser(db(), { twin, accountType: 'super' });
    const adminToken = await signIn(t.app, admin.user.email);
    const superToken = await signIn(t.app, sup.user.email);
    expect((await req(adminToken, 'PUT', `/api/admin/freeInstitutionCreditsById/${twin.id}`, { credits: 5 })).status).toBe(403);
    expect((await req(superToken, 'PUT', '/api/admin/freeInstitutionCreditsById/ffffffffffffffffffffffff', { credits: 5 })).status).toBe(404);
    expect((await req(superToken, 'PUT', `/api/admin/freeInstitutionCreditsById/${twin.id}`, { credits: -5 })).status).toBe(400);
    expect((await req(superToken, 'PUT', '/api/admin/freeInstitutionCreditsById/123', { credits: 5 })).status).toBe(400);
    expect((await findTwinById(db(), twin.id))!.credits).toBe(0);
  });

  it("hides another twin's ledger (404)", async () => {
    const mine = await buildTwin(db());
    const other = await buildTwin(db());
    const admin = await buildUser(db(), { twin: mine, role: 'admin' });
    const token = await signIn(t.app, admin.user.email);
    expect((await req(token, 'GET', `/api/admin/institution/${mine.id}/credits/ledger`)).status).toBe(200);
    expect((await req(token, 'GET', `/api/admin/institution/${other.id}/credits/ledger`)).status).toBe(404);
  });
});
