// Shapes an account for administrators, field by field, with its memberships in twins they manage.
import type { UserRow } from '../users/users.tables.js';
import type { MembershipView } from './admin-users.repo.js';
import type { AdminUserWire } from './admin-users.schemas.js';

export function presentAdminUser(user: UserRow, memberships: MembershipView[]): AdminUserWire {
  return {
    _id: user.id,
    email: user.email,
    fname: user.fname,
    lname: user.lname,
    picture: user.picture,
    accountType: user.accountType,
    status: user.status,
    plan: user.plan,
    credits: user.credits,
    creditsUsed: user.creditsUsed,
    institution: user.currentTwinId,
    mfaEnabled: user.mfaEnabled,
    mfaMethod: user.mfaMethod,
    mustChangePassword: user.mustChangePassword,
    created: user.createdAt.toISOString(),
    updated: user.updatedAt.toISOString(),
    memberships: memberships
      .filter((m) => m.userId === user.id)
      .map((m) => ({ _id: m.id, institution: m.twinId, name: m.name, role: m.role, permissions: m.permissions })),
  };
}
