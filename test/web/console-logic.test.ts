// The console's logic outside a browser: which families and actions a profile is offered (the same
// rule as the service's permissions), the CSV import's preview, and field errors read from a failure.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api/api-error.js';
import { previewCsv } from '../../web/src/admin/csv-preview.js';
import { actionsFor, FAMILIES, familiesFor, type ProfileRights } from '../../web/src/admin/families.js';
import { fieldErrors } from '../../web/src/admin/field-errors.js';
import { buildBody, initialValues, type FieldSpec } from '../../web/src/admin/form-body.js';
import { PERMISSIONS, permissionsFor } from '../../src/platform/http/permissions.js';

const labels = (rights: ProfileRights) => familiesFor(rights).map((family) => family.label);

describe('the families a profile is offered', () => {
  it('gives a super admin every family, a twin admin all but accounts, a plain user none', () => {
    expect(labels({ accountType: 'super', permissions: permissionsFor('super', undefined, []) })).toEqual(FAMILIES.map((family) => family.label));
    expect(labels({ accountType: 'user', permissions: permissionsFor('user', 'admin', []), role: 'admin' })).toEqual(FAMILIES.filter((family) => family.key !== 'accounts').map((family) => family.label));
    expect(labels({ accountType: 'user', permissions: permissionsFor('user', 'user', []) })).toEqual([]);
  });

  it('follows single grants, and names only permissions the service knows', () => {
    expect(labels({ accountType: 'user', permissions: ['questions.list', 'charts.view'] })).toEqual(['Charts', 'Questions']);
    for (const family of FAMILIES) if (!['super', 'twin-admin'].includes(family.needs)) expect(PERMISSIONS).toContain(family.needs);
    // The subscription is for the twin's administrators (the role): every permission granted one by one is not enough.
    expect(labels({ accountType: 'user', permissions: [...PERMISSIONS], role: 'user' })).not.toContain('Subscription');
    expect(labels({ accountType: 'user', permissions: [...PERMISSIONS], role: 'user' })).toContain('Charts');
    expect(labels({ accountType: 'user', permissions: permissionsFor('user', 'admin', []), role: 'admin' })).toContain('Subscription');
    expect(labels({ accountType: 'super', permissions: [], role: null })).toContain('Subscription');
  });

  it('offers only the actions the service would allow', () => {
    const lister = actionsFor({ accountType: 'user', permissions: ['users.list', 'questions.list'] });
    expect(lister.people).toEqual({ create: false, edit: false, remove: false, makeSuper: false });
    expect(lister.questions.edit).toBe(false);
    const twinAdmin = actionsFor({ accountType: 'admin', permissions: permissionsFor('admin', 'admin', []) });
    expect(twinAdmin.twins).toEqual({ edit: true, create: false, remove: false, setAccount: false, ltiPlatforms: true });
    expect(actionsFor({ accountType: 'user', permissions: ['institutions.list', 'institutions.edit'] }).twins.ltiPlatforms).toBe(false);
    expect(twinAdmin.entitlements.edit).toBe(false);
    expect(actionsFor({ accountType: 'super', permissions: [] }).entitlements.edit).toBe(true);
  });
});

describe('the CSV import preview', () => {
  it('says what each row will do, and why a row will fail', () => {
    const preview = previewCsv('email,fname,lname,role,team\nada@example.test,Ada,L,,blue\n"bob@example.test",Bob,,admin,\nnot-an-email,X,,,\ncy@example.test,Cy,,owner,\n', 'user');
    expect(preview.unknownColumns).toEqual(['team']);
    expect(preview.rows).toEqual([
      { line: 1, email: 'ada@example.test', name: 'Ada L', role: 'user' },
      { line: 2, email: 'bob@example.test', name: 'Bob', role: 'admin' },
      { line: 3, email: 'not-an-email', name: 'X', role: 'user', problem: 'not an email address' },
      { line: 4, email: 'cy@example.test', name: 'Cy', role: 'owner', problem: 'role must be user or admin, not owner' },
    ]);
  });

  it('refuses a file without an email column or without people', () => {
    expect(previewCsv('name\nAda\n', 'user').problem).toBe('The header row has no email column.');
    expect(previewCsv('email\n', 'user').problem).toBe('The file has a header row but no people.');
  });
});

describe('field errors', () => {
  it("maps the service's issues to the wire's field names", () => {
    const error = new ApiError(400, { message: 'Invalid body.email', code: 'VALIDATION_FAILED', error: { field: 'body.email', issues: [{ field: 'body.email', message: 'Invalid email address' }, { field: 'body.caps.dailyTurns', message: 'Too small' }] } });
    expect(fieldErrors(error)).toEqual({ email: 'Invalid email address', caps: 'Too small', 'caps.dailyTurns': 'Too small' });
    const listItem = new ApiError(400, { message: 'Invalid body.models.2', error: { issues: [{ field: 'body.models.2', message: 'Too long' }] } });
    expect(fieldErrors(listItem)).toEqual({ models: 'Too long' });
    expect(fieldErrors(new ApiError(403, { message: 'Not authorized' }))).toEqual({});
  });
});

describe('what a form sends', () => {
  const fields: FieldSpec[] = [
    { name: 'name', label: 'Name' },
    { name: 'status', label: 'Status', type: 'select', options: ['active', 'inactive'] },
    { name: 'apiKey', label: 'API key', type: 'password' },
    { name: 'maxTokens', label: 'Max tokens', type: 'number' },
    { name: 'models', label: 'Models', type: 'list' },
    { name: 'caps.dailyTurns', label: 'Turns a day', type: 'number', nullable: true },
    { name: 'caps.maxFiles', label: 'Files', type: 'number', nullable: true },
    { name: 'expiresAt', label: 'Expires', type: 'datetime', nullable: true },
  ];

  it('creates with the fields filled in, a choice starting at its first option', () => {
    const values = { ...initialValues(fields), name: 'Fast', apiKey: 'sk-1', maxTokens: '500', models: 'a, b,,c ' };
    expect(buildBody(fields, values)).toEqual({ name: 'Fast', status: 'active', apiKey: 'sk-1', maxTokens: 500, models: ['a', 'b', 'c'] });
  });

  it('edits with what changed: never a stored secret, a cleared limit as null, a nested group whole', () => {
    const record = { name: 'Fast', status: 'active', apiKeySet: true, maxTokens: 500, models: ['a'], caps: { dailyTurns: 10, maxFiles: null }, expiresAt: '2027-01-02T03:04:00.000Z' };
    const start = initialValues(fields, record);
    expect(start).toEqual({ name: 'Fast', status: 'active', apiKey: '', maxTokens: '500', models: 'a', 'caps.dailyTurns': '10', 'caps.maxFiles': '', expiresAt: '2027-01-02T03:04' });
    expect(buildBody(fields, start, start)).toEqual({});
    expect(buildBody(fields, { ...start, name: 'Faster' }, start)).toEqual({ name: 'Faster' });
    expect(buildBody(fields, { ...start, apiKey: 'sk-2' }, start)).toEqual({ apiKey: 'sk-2' });
    expect(buildBody(fields, { ...start, 'caps.dailyTurns': '' }, start)).toEqual({ caps: { dailyTurns: null, maxFiles: null } });
    expect(buildBody(fields, { ...start, 'caps.maxFiles': '3' }, start)).toEqual({ caps: { dailyTurns: 10, maxFiles: 3 } });
    expect(buildBody(fields, { ...start, expiresAt: '' }, start)).toEqual({ expiresAt: null });
    expect(buildBody(fields, { ...start, expiresAt: '2028-05-06T07:08' }, start)).toEqual({ expiresAt: '2028-05-06T07:08:00.000Z' });
    // A cleared name goes as '' so the service answers at the field; a cleared number is not sent.
    expect(buildBody(fields, { ...start, name: '', maxTokens: '' }, start)).toEqual({ name: '' });
    expect(buildBody(fields, { ...start, models: '' }, start)).toEqual({ models: [] });
  });
});
