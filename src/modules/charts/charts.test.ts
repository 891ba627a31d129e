// The admin charts through the real routes: usage and feedback per day (and per assistant) within the
// window asked, only of the twins where the caller holds charts.view; a plain user 403; bad windows 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildTwin, buildUser, signIn, type BuiltUser } from '../../../test/support/factories.js';
import { buildRecord } from '../../../test/support/history-factories.js';
import { requester } from '../../../test/support/http.js';
import { historyFeedback } from '../history/history.tables.js';
import type { TwinRow } from '../twins/twins.tables.js';

let t: TestApp;
let req: ReturnType<typeof requester>;
let twinA: TwinRow;
let twinB: TwinRow;
let ada: BuiltUser;
let bob: BuiltUser;
const token = {} as Record<'super' | 'adminA' | 'plain' | 'viewer', string>;
const db = () => t.platform.database.db;
const at = (day: string, hour = 12) => new Date(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);

beforeAll(async () => {
  t = await startTestApp();
  req = requester(t.app);
  twinA = await buildTwin(db());
  twinB = await buildTwin(db());
  ada = await buildUser(db(), { twin: twinA });
  bob = await buildUser(db(), { twin: twinA });
  const carol = await buildUser(db(), { twin: twinB });
  token.super = await signIn(t.app, (await buildUser(db(), { twin: twinB, accountType: 'super' })).user.email);
  token.adminA = await signIn(t.app, (await buildUser(db(), { twin: twinA, role: 'admin' })).user.email);
  token.plain = await signIn(t.app, ada.user.email);
  token.viewer = await signIn(t.app, (await buildUser(db(), { twin: twinA, grants: ['charts.view'] })).user.email);
  // Twin A: two turns by two people on 3 March, one on 5 March (and one outside the window); twin B: one on 3 March.
  const records = [
    await buildRecord(db(), { twinId: twinA.id, userId: ada.user.id, at: at('2030-03-03', 9) }),
    await buildRecord(db(), { twinId: twinA.id, userId: bob.user.id, at: at('2030-03-03', 23) }),
    await buildRecord(db(), { twinId: twinA.id, userId: ada.user.id, at: at('2030-03-05') }),
    await buildRecord(db(), { twinId: twinA.id, userId: ada.user.id, at: at('2030-03-09') }),
    await buildRecord(db(), { twinId: twinB.id, userId: carol.user.id, at: at('2030-03-03') }),
  ];
  const rate = (index: number, rating: 'up' | 'down', day: string) =>
    db().insert(historyFeedback).values({ twinId: records[index].twinId, historyId: records[index].id, userId: records[index].userId, rating, createdAt: at(day) });
  await rate(0, 'up', '2030-03-03');
  await rate(1, 'down', '2030-03-04');
  await rate(2, 'up', '2030-03-05');
  await rate(4, 'down', '2030-03-03');
});
afterAll(() => t.close());

const chart = (who: string, name: string, body: Record<string, unknown>) => req(who, 'POST', `/api/admin/histories/charts/${name}`, body);
const WINDOW = { from: '2030-03-02', to: '2030-03-05' };

describe('usage chart', () => {
  it("sums the admin's twin per day, every day of the window listed", async () => {
    const answer = await chart(token.adminA, 'usage', WINDOW);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      from: '2030-03-02T00:00:00.000Z',
      to: '2030-03-06T00:00:00.000Z',
      days: [
        { day: '2030-03-02', turns: 0, tokens: 0, credits: 0, activePeople: 0 },
        { day: '2030-03-03', turns: 2, tokens: 240, credits: 1.5, activePeople: 2 },
        { day: '2030-03-04', turns: 0, tokens: 0, credits: 0, activePeople: 0 },
        { day: '2030-03-05', turns: 1, tokens: 120, credits: 0.75, activePeople: 1 },
      ],
    });
  });

  it('gives a super admin every twin, or one; a twin outside the scope gives zeros', async () => {
    const all = await chart(token.super, 'usage', WINDOW);
    expect(all.body.days[1]).toEqual({ day: '2030-03-03', turns: 3, tokens: 360, credits: 2.25, activePeople: 3 });
    expect((await chart(token.super, 'usage', { ...WINDOW, institution: twinB.id })).body.days[1].turns).toBe(1);
    const outside = await chart(token.adminA, 'usage', { ...WINDOW, institution: twinB.id });
    expect(outside.body.days.map((d: { turns: number }) => d.turns)).toEqual([0, 0, 0, 0]);
    expect((await chart(token.viewer, 'usage', WINDOW)).body.days[1].turns).toBe(2);
  });
});

describe('feedback chart', () => {
  it('counts up and down per day and per assistant', async () => {
    const answer = await chart(token.adminA, 'feedback', { from: '2030-03-03T00:00:00Z', to: '2030-03-05' });
    expect(answer.body.days).toEqual([
      { day: '2030-03-03', up: 1, down: 0 },
      { day: '2030-03-04', up: 0, down: 1 },
      { day: '2030-03-05', up: 1, down: 0 },
    ]);
    expect(answer.body.assistants).toEqual([{ assistantId: 'c'.repeat(24), name: 'Tutor', up: 2, down: 1 }]);
    const all = await chart(token.super, 'feedback', WINDOW);
    expect(all.body.assistants).toEqual([{ assistantId: 'c'.repeat(24), name: 'Tutor', up: 2, down: 2 }]);
  });
});

describe('every chart', () => {
  it('answers 403 to a plain user, and defaults to the last 31 days', async () => {
    for (const name of ['usage', 'feedback', 'subagent-efficiency']) {
      expect(await chart(token.plain, name, {}), name).toMatchObject({ status: 403, body: { success: false, message: 'Not authorized' } });
      const answer = await chart(token.adminA, name, {});
      expect(answer.status, name).toBe(200);
      expect((answer.body.days ?? answer.body.series).length, name).toBe(32);
    }
  });

  it('refuses a bad window with a 400 naming the field', async () => {
    const reversed = await chart(token.adminA, 'usage', { from: '2030-03-05', to: '2030-03-01' });
    expect(reversed).toMatchObject({ status: 400, body: { success: false, code: 'INVALID_RANGE', error: { field: 'body.from' } } });
    expect((await chart(token.adminA, 'feedback', { from: '2029-01-01', to: '2030-06-01' })).body).toMatchObject({ code: 'INVALID_RANGE', error: { field: 'body.to' } });
    expect((await chart(token.adminA, 'usage', { from: 'yesterday' })).body).toMatchObject({ code: 'VALIDATION_FAILED', error: { field: 'body.from' } });
    expect((await chart(token.adminA, 'subagent-efficiency', { institution: 'nope' })).status).toBe(400);
  });

  it('subagent efficiency follows the window asked', async () => {
    const answer = await chart(token.adminA, 'subagent-efficiency', WINDOW);
    expect(answer.body.data).toEqual([expect.objectContaining({ name: 'researcher', runs: 3, steps: 6, failedSteps: 0, successRate: 1 })]);
    expect(answer.body.series).toHaveLength(4);
  });
});
