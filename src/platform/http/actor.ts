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

/** The kinds of session a token may name: a person's (`full`), a person's confined to one twin (`launch`), or an embedded page's visitor (`visitor`). */
export type SessionKind = 'full' | 'launch' | 'visitor';

/**
 * An embedded page's visitor: no account, bound to one twin, named by an id the service generated when it
 * opened the session. The guard hands it only to routes that opt in (`config: { visitors: true }`); every
 * other route answers 403 VISITOR_SCOPE, so person-only code, which reads `Actor`, never sees one.
 */
export interface VisitorActor {
  kind: 'visitor';
  sessionId: string;
  visitorId: string;
  twinId: string;
}

/** Whoever a valid token names: a person or a visitor. */
export type Caller = Actor | VisitorActor;

export function isVisitor(caller: Caller): caller is VisitorActor {
  return 'kind' in caller && caller.kind === 'visitor';
}

export function isSuper(actor: Actor): boolean {
  return actor.accountType === 'super';
}

export function can(actor: Actor, permission: Permission): boolean {
  return actor.permissions.includes(permission);
}
