// The refreshed profile carries every field of the spec's profile and institution tables,
// and the bootstrap creates the first super admin and "Default Twin" exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { buildUser, signIn } from '../../../test/support/factories.js';
import { bootstrapFirstAdmin, DEFAULT_TWIN_NAME } from '../../bootstrap.js';
import { countUsers } from './users.repo.js';

const PROFILE_FIELDS = [
  '_id', 'email', 'fname', 'lname', 'picture', 'accountType', 'permissions', 'customerId',
  'lxp_user_id', 'lxp_partner_id', 'lxp_partner_name', 'lxp_role_name', 'lxp_user_type', 'lxp_role_id',
  'credits', 'creditsUsed', 'plan', 'status', 'trial_end', 'current_period_end', 'created',
  'trial_used', 'cancel_at_period_end', 'use_location', 'pin_ui', 'dark_mode', 'referralId', 'resetCodeId',
  'referrerPaid', 'invoices_urls', 'remember_history_count', 'max_dialogues', '__v', 'browser_voice', 'rt_voice',
  'institution',
];
const INSTITUTION_FIELDS = [
  '_id', 'id', 'name', 'picture', 'picture_bg', 'picture_animated', 'ainame', 'status', 'allowJoining', 'rtVoice',
  'questionType', 'credits', 'creditAward', 'maxCompletionTokens', 'maxFiles', 'creditsTotal', 'creditsUsagePct',
  'joiningAdminOnly', 'poolCredits', 'disableFileUploadForUser', 'personalisationAsked', 'locationEnabled', 'rtEnabled',
  'rtAdminOnly', 'displayAgentDetails', 'disableAssistantsForUser', 'publicId', 'publicAuthorizedUrls', 'invoices_urls',
  'toolsDisabled', 'ltiContextIds', 'assistantsDisabled', 'contactEmail',
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('POST /api/user/refresh/profile', () => {
  it('returns every profile and institution field with the spec types', async () => {
    const { user } = await buildUser(t.platform.database.db, { role: 'admin' });
    const token = await signIn(t.app, user.email);
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/user/refresh/profile',
      headers: { 'x-access-token': token, 'content-type': 'application/json' },
      payload: { slug: 'home', tag: 'x' },
    });
    expect(response.statusCode).toBe(200);
    const { success, profile } = response.json();
    expect(success).toBe(true);
    for (const field of PROFILE_FIELDS) expect(profile, field).toHaveProperty(field);
    for (const field of INSTITUTION_FIELDS) expect(profile.institution, field).toHaveProperty(field);
    expect(profile.accountType).toBe('user');
    expect(profile.permissions).toEqual(expect.arrayContaining(['users.edit', 'institutions.edit', 'histories.list']));
    expect(profile.created).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    expect(profile.referralId).toMatch(/^[0-9a-f-]{36}$/);
    expect(profile.institution.publicId).toMatch(/^[0-9a-f-]{36}$/);
    expect(profile.institution._id).toBe(profile.institution.id);
    expect(profile._id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('shows no permissions to a plain member and a null institution to a person without a twin', async () => {
    const member = await buildUser(t.platform.database.db);
    const loner = await buildUser(t.platform.database.db, { twin: null });
    const memberProfile = (await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': await signIn(t.app, member.user.email) } })).json().profile;
    const lonerProfile = (await t.app.inject({ method: 'POST', url: '/api/user/refresh/profile', headers: { 'x-access-token': await signIn(t.app, loner.user.email) } })).json().profile;
    expect(memberProfile.permissions).toEqual([]);
    expect(lonerProfile.institution).toBeNull();
  });
});

describe('bootstrapFirstAdmin', () => {
  it('creates the super admin and Default Twin on an empty database, once', async () => {
    const db = t.platform.database.db;
    // This database already has people, so nothing is created.
    expect(await bootstrapFirstAdmin(db, { email: 'root@example.test', password: 'long-password' })).toEqual({ created: false });
  });
});

describe('bootstrapFirstAdmin on an empty database', () => {
  let empty: TestApp;
  beforeAll(async () => {
    empty = await startTestApp();
  });
  afterAll(() => empty.close());

  it('makes a super admin who can sign in, member and admin of Default Twin', async () => {
    const db = empty.platform.database.db;
    expect(await countUsers(db)).toBe(0);
    const result = await bootstrapFirstAdmin(db, { email: 'Root@Example.test', password: 'long-password' });
    expect(result.created).toBe(true);
    const second = await bootstrapFirstAdmin(db, { email: 'other@example.test', password: 'long-password' });
    expect(second.created).toBe(false);
    expect(await countUsers(db)).toBe(1);
    const response = await empty.app.inject({ method: 'POST', url: '/api/auth/signin', payload: { email: 'root@example.test', password: 'long-password' } });
    expect(response.statusCode).toBe(200);
    const { profile } = response.json();
    expect(profile.accountType).toBe('super');
    expect(profile.institution.name).toBe(DEFAULT_TWIN_NAME);
    expect(profile.permissions.length).toBeGreaterThan(5);
  });
});
