// Create or add (behaviour 2), shared by POST /api/admin/user and the import. A new email makes an
// account in the importing twin. A known email only adds that person to the twin with the chosen role
// (an existing role is raised, never lowered) and raises the account type when a higher one is asked;
// names, password, credits, status, plan, current twin and MFA stay untouched and are reported ignored.
import { isSuper, type Actor } from '../../platform/http/actor.js';
import { ConflictError, ForbiddenError } from '../../platform/http/errors.js';
import { hashPassword } from '../../platform/crypto/passwords.js';
import { findMembership } from '../twins/twins.repo.js';
import { findUserByEmail, updateUser } from '../users/users.repo.js';
import { insertAccount } from '../credits/starting-credits.js';
import type { AccountType, UserRow } from '../users/users.tables.js';
import { requireAccess } from '../access/access.js';
import { ensureMembership } from '../memberships/memberships.repo.js';
import { updateMembershipRole } from './admin-users.repo.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { EMAIL_TAKEN, type AdminUsersDeps } from './admin-users.service.js';

export interface EnrolRequest {
  email: string;
  fname?: string;
  lname?: string;
  password?: string;
  accountType?: AccountType;
  role?: 'user' | 'admin';
  mustChangePassword?: boolean;
  /** Keys of the request this operation never applies (reported in ignoredFields). */
  otherKeys?: string[];
}

export interface EnrolResult {
  outcome: 'created' | 'added' | 'updated' | 'unchanged';
  user: UserRow;
  ignoredFields: string[];
}

const RANK: Record<AccountType, number> = { user: 0, admin: 1, super: 2 };
const outranks = (a: AccountType, b: AccountType) => RANK[a] > RANK[b];

const FIELDS_KEPT_ON_EXISTING = ['fname', 'lname', 'password', 'mustChangePassword'] as const;

/** Access: users.create in the twin; only a super admin may create or raise an account to super. */
export async function authorizeEnrol(deps: AdminUsersDeps, actor: Actor, twinId: string): Promise<void> {
  await requireAccess(deps.db, actor, 'user.enrol', { twinId });
}

export async function enrol(deps: AdminUsersDeps, actor: Actor, twinId: string, request: EnrolRequest): Promise<EnrolResult> {
  const { db, cache } = deps;
  const email = request.email.trim().toLowerCase();
  const role = request.role ?? 'user';
  const existing = await findUserByEmail(db, email);
  const asked = request.accountType;
  if (asked === 'super' && !isSuper(actor) && existing?.accountType !== 'super') {
    throw new ForbiddenError('Only a super admin can create super admin accounts', 'SUPER_ONLY');
  }

  if (!existing) {
    const passwordHash = request.password ? await hashPassword(request.password) : null;
    try {
      const user = await db.transaction(async (tx) => {
        const created = await insertAccount(
          tx,
          {
            email,
            passwordHash,
            fname: request.fname ?? '',
            lname: request.lname ?? '',
            accountType: asked ?? 'user',
            mustChangePassword: request.mustChangePassword ?? false,
            currentTwinId: twinId,
          },
          deps.startingCredits,
        );
        await ensureMembership(tx, twinId, created.id, role);
        return (await updateUser(tx, created.id, { currentTwinId: twinId }))!;
      });
      return { outcome: 'created', user, ignoredFields: [...(request.otherKeys ?? [])] };
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(EMAIL_TAKEN, 'EMAIL_TAKEN');
      throw error;
    }
  }

  const ignoredFields = [...(request.otherKeys ?? [])];
  for (const field of FIELDS_KEPT_ON_EXISTING) if (request[field] !== undefined) ignoredFields.push(field);
  const result = await db.transaction(async (tx) => {
    let outcome: EnrolResult['outcome'] = 'unchanged';
    const membership = await findMembership(tx, existing.id, twinId);
    if (!membership) {
      await ensureMembership(tx, twinId, existing.id, role);
      outcome = 'added';
    } else if (role === 'admin' && membership.role === 'user') {
      await updateMembershipRole(tx, membership.id, 'admin');
      outcome = 'updated';
    } else if (request.role !== undefined && request.role !== membership.role) {
      ignoredFields.push('role');
    }
    let user = existing;
    if (asked && outranks(asked, existing.accountType)) {
      user = (await updateUser(tx, existing.id, { accountType: asked }))!;
      if (outcome === 'unchanged') outcome = 'updated';
    } else if (asked && asked !== existing.accountType) {
      ignoredFields.push('accountType');
    }
    return { outcome, user };
  });
  if (result.outcome !== 'unchanged') await cache.invalidate({ userId: existing.id });
  return { ...result, ignoredFields };
}
