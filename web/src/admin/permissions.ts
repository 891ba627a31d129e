// The permissions a member can be granted, in the service's order (src/platform/http/permissions.ts;
// the console's tests hold the two lists equal). Not typed from the generated API types: the service's
// type check, which runs before any build, reads this file through those tests.

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
] as const;
