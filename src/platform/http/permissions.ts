// The permission strings, decided once. A twin's admins hold them all in that twin; a member with
// the user role holds only the grants on their membership; a super admin holds them all everywhere.
// The console imports this file for the grants it offers: keep it free of imports.

export const PERMISSIONS = [
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

export type Permission = (typeof PERMISSIONS)[number];
export type MembershipRole = 'user' | 'admin';

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** The permissions a person holds in one twin. */
export function permissionsFor(accountType: string, role: MembershipRole | undefined, grants: readonly string[]): Permission[] {
  if (accountType === 'super' || role === 'admin') return [...PERMISSIONS];
  if (!role) return [];
  return grants.filter(isPermission);
}
