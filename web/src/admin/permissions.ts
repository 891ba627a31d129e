// The permissions a member can be granted, in the service's order (src/platform/http/permissions.ts;
// the console's tests hold the two lists equal). Typed against the membership route's body, so a name
// the service does not take breaks the build.
import type { paths } from '../api/schema.js';

type Grantable = NonNullable<NonNullable<paths['/api/admin/membership/{id}']['put']['requestBody']>['content']['application/json']['permissions']>[number];

export const PERMISSION_NAMES = [
  'institutions.list',
  'institutions.edit',
  'users.list',
  'users.create',
  'users.edit',
  'users.delete',
  'assistants.list',
  'assistants.edit',
  'assistants.delete',
  'histories.list',
  'histories.delete',
  'sessions.list',
  'sessions.delete',
  'files.access',
  'uploads.list',
  'uploads.delete',
  'models.edit',
  'tools.edit',
  'mcp.edit',
  'questions.list',
  'questions.edit',
  'feedback.list',
  'feedback.delete',
  'entitlements.edit',
  'credits.edit',
  'charts.view',
  'sso.edit',
] as const satisfies readonly Grantable[];
