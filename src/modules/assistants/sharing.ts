// The sharing rules of the assistant update (and create), as one pure function: institution_shared,
// account_shared and admin_only are decided on the twin the assistant will be in. Only people who
// manage that twin's assistants (its administrators, holders of assistants.edit) may turn them on, or
// turn them off on someone else's assistant; the owner may turn them off. A refused change is not an
// error: it is not applied and `sharingDropped` reports it. Moving into a twin the caller does not
// manage, or out of any twin, leaves the assistant unshared. account_shared needs institution_shared
// and a twin that belongs to an account.
import type { AssistantScope } from './assistants.schemas.js';

export interface SharingFlags {
  twinShared: boolean;
  accountShared: boolean;
  adminOnly: boolean;
}

export interface SharingInput {
  previous: SharingFlags;
  requested: Partial<SharingFlags>;
  /** The twin the assistant will be in (null: personal or system) and whether it belongs to an account. */
  target: { twinId: string | null; hasAccount: boolean };
  /** The assistant changes twin with this request. */
  moving: boolean;
  callerManagesTarget: boolean;
  callerIsOwner: boolean;
  /** The assistant has no owner and no twin. */
  system: boolean;
}

export interface SharingOutcome {
  flags: SharingFlags;
  sharingDropped: boolean;
  scope: AssistantScope;
}

const FLAGS = ['twinShared', 'accountShared', 'adminOnly'] as const;
const UNSHARED: SharingFlags = { twinShared: false, accountShared: false, adminOnly: false };

export function decideSharing(input: SharingInput): SharingOutcome {
  const desired = { ...input.previous, ...definedOnly(input.requested) };
  let flags: SharingFlags;
  if (!input.target.twinId || (input.moving && !input.callerManagesTarget)) {
    flags = { ...UNSHARED };
  } else {
    flags = { ...input.previous };
    for (const key of FLAGS) {
      const want = desired[key];
      if (want === input.previous[key]) continue;
      const allowed = input.callerManagesTarget || (want === false && input.callerIsOwner);
      if (allowed) flags[key] = want;
    }
    if (!flags.twinShared || !input.target.hasAccount) flags.accountShared = false;
  }
  const sharingDropped = FLAGS.some((key) => flags[key] !== desired[key]);
  return { flags, sharingDropped, scope: scopeOf({ ...flags, twinId: input.target.twinId, system: input.system }) };
}

export function scopeOf(a: { twinId: string | null; twinShared: boolean; accountShared: boolean; system: boolean }): AssistantScope {
  if (a.system) return 'system';
  if (!a.twinId || !a.twinShared) return 'user';
  return a.accountShared ? 'account' : 'institution';
}

function definedOnly(values: Partial<SharingFlags>): Partial<SharingFlags> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<SharingFlags>;
}
