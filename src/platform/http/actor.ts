// Who is calling: resolved once per request by the auth guard from the session the token names.
import type { Permission, MembershipRole } from './permissions.js';

export interface Actor {
  userId: string;
  sessionId: string;
  email: string;
  accountType: 'user' | 'admin' | 'super';
  /** The twin the person is working in now, if any. */
  twinId: string | null;
  /** Role and permissions in that twin. */
  role: MembershipRole | null;
  permissions: Permission[];
  /** Set for a launch session that has not stepped up yet (behaviour 16): confined to this twin. */
  launchScope: { twinId: string } | null;
  mustChangePassword: boolean;
}

export function isSuper(actor: Actor): boolean {
  return actor.accountType === 'super';
}

export function can(actor: Actor, permission: Permission): boolean {
  return actor.permissions.includes(permission);
}
