// Which administration families the console shows, and which of their actions it offers: decided from
// the profile (its accountType and the permissions it holds in the current twin) and, for the one family
// kept to the twin's administrators, the role of the current membership (GET /api/user/institutions), by
// the same rule the service applies (src/platform/http/permissions.ts and modules/access/rules.ts). One
// table, so the navigation, each screen's buttons and the tests read the same answer.

export interface ProfileRights {
  accountType: string;
  permissions: readonly string[];
  /** The role in the current twin ("admin" or "user"), when known: the membership marked current. */
  role?: string | null;
}

export type FamilyKey =
  | 'dashboard'
  | 'people'
  | 'twins'
  | 'accounts'
  | 'assistants'
  | 'histories'
  | 'sessions'
  | 'feedback'
  | 'uploads'
  | 'models'
  | 'mcp'
  | 'tools'
  | 'sso'
  | 'entitlements'
  | 'questions'
  | 'credits'
  | 'subscription';

export interface Family {
  key: FamilyKey;
  /** The navigation's name (the contract's words). */
  label: string;
  path: string;
  /** The permission the family's list needs; 'super' for super admins only; 'twin-admin' for the current twin's administrators. */
  needs: string;
}

export const FAMILIES: readonly Family[] = [
  { key: 'dashboard', label: 'Charts', path: 'charts', needs: 'charts.view' },
  { key: 'people', label: 'People', path: 'people', needs: 'users.list' },
  { key: 'twins', label: 'Twins', path: 'twins', needs: 'institutions.list' },
  { key: 'assistants', label: 'Assistants', path: 'assistants', needs: 'assistants.list' },
  { key: 'mcp', label: 'MCP servers', path: 'mcp-servers', needs: 'mcp.edit' },
  { key: 'tools', label: 'Tools', path: 'tools', needs: 'tools.edit' },
  { key: 'questions', label: 'Questions', path: 'questions', needs: 'questions.list' },
  { key: 'histories', label: 'Histories', path: 'histories', needs: 'histories.list' },
  { key: 'sessions', label: 'Sessions', path: 'sessions', needs: 'sessions.list' },
  { key: 'feedback', label: 'Feedback', path: 'feedback', needs: 'feedback.list' },
  { key: 'uploads', label: 'Uploads', path: 'uploads', needs: 'uploads.list' },
  { key: 'models', label: 'AI models', path: 'ai-models', needs: 'models.edit' },
  { key: 'sso', label: 'SSO providers', path: 'sso-providers', needs: 'sso.edit' },
  { key: 'entitlements', label: 'Entitlements', path: 'entitlements', needs: 'institutions.list' },
  { key: 'credits', label: 'Credits', path: 'credits', needs: 'credits.edit' },
  { key: 'subscription', label: 'Subscription', path: 'subscription', needs: 'twin-admin' },
  { key: 'accounts', label: 'Accounts', path: 'accounts', needs: 'super' },
];

export const isSuper = (rights: ProfileRights) => rights.accountType === 'super';

/** Holds the permission (a super admin holds every one everywhere). */
export function holds(rights: ProfileRights, permission: string): boolean {
  if (permission === 'super') return isSuper(rights);
  // The subscription belongs to the current twin's administrators: the role, not a set of grants.
  if (permission === 'twin-admin') return isSuper(rights) || rights.role === 'admin';
  return isSuper(rights) || rights.permissions.includes(permission);
}

/** The families this person may open, in the navigation's order (none for a plain user). */
export function familiesFor(rights: ProfileRights): Family[] {
  return FAMILIES.filter((family) => holds(rights, family.needs));
}

/** The actions a screen offers, each only when the service would allow it. */
export function actionsFor(rights: ProfileRights) {
  const can = (permission: string) => holds(rights, permission);
  return {
    people: { create: can('users.create'), edit: can('users.edit'), remove: can('users.delete'), makeSuper: isSuper(rights) },
    twins: { edit: can('institutions.edit'), create: isSuper(rights), remove: isSuper(rights), setAccount: isSuper(rights), ltiPlatforms: can('sso.edit') },
    assistants: { edit: can('assistants.edit'), remove: can('assistants.delete') },
    histories: { remove: can('histories.delete') },
    sessions: { remove: can('sessions.delete') },
    feedback: { review: can('feedback.delete'), remove: can('feedback.delete') },
    uploads: { remove: can('uploads.delete') },
    questions: { edit: can('questions.edit') },
    entitlements: { edit: isSuper(rights) },
    credits: { award: isSuper(rights) },
  };
}
