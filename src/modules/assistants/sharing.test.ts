// decideSharing as a table: the sharing outcome of an update for each kind of caller and move.
import { describe, expect, it } from 'vitest';
import { decideSharing, type SharingFlags, type SharingInput } from './sharing.js';

const OFF: SharingFlags = { twinShared: false, accountShared: false, adminOnly: false };
const SHARED: SharingFlags = { twinShared: true, accountShared: false, adminOnly: false };
const ACCOUNT: SharingFlags = { twinShared: true, accountShared: true, adminOnly: false };
const base: SharingInput = {
  previous: OFF,
  requested: {},
  target: { twinId: 'a'.repeat(24), hasAccount: true },
  moving: false,
  callerManagesTarget: false,
  callerIsOwner: true,
  system: false,
};

const CASES: { name: string; input: Partial<SharingInput>; flags: SharingFlags; dropped: boolean; scope: string }[] = [
  { name: 'nothing asked, nothing changes', input: { previous: SHARED }, flags: SHARED, dropped: false, scope: 'institution' },
  { name: 'owner asks to share: refused', input: { requested: { twinShared: true } }, flags: OFF, dropped: true, scope: 'user' },
  { name: 'manager shares', input: { callerManagesTarget: true, requested: { twinShared: true } }, flags: SHARED, dropped: false, scope: 'institution' },
  { name: 'owner unshares', input: { previous: SHARED, requested: { twinShared: false } }, flags: OFF, dropped: false, scope: 'user' },
  { name: 'non-owner non-manager cannot unshare', input: { previous: SHARED, callerIsOwner: false, requested: { twinShared: false } }, flags: SHARED, dropped: true, scope: 'institution' },
  { name: 'manager unshares another\'s', input: { previous: SHARED, callerIsOwner: false, callerManagesTarget: true, requested: { twinShared: false } }, flags: OFF, dropped: false, scope: 'user' },
  { name: 'account sharing by a manager', input: { previous: SHARED, callerManagesTarget: true, requested: { accountShared: true } }, flags: ACCOUNT, dropped: false, scope: 'account' },
  { name: 'account sharing without institution sharing is reset', input: { callerManagesTarget: true, requested: { accountShared: true } }, flags: OFF, dropped: true, scope: 'user' },
  { name: 'account sharing on a twin without account', input: { previous: SHARED, callerManagesTarget: true, target: { twinId: 'a'.repeat(24), hasAccount: false }, requested: { accountShared: true } }, flags: SHARED, dropped: true, scope: 'institution' },
  { name: 'unsharing resets account sharing', input: { previous: ACCOUNT, requested: { twinShared: false } }, flags: OFF, dropped: true, scope: 'user' },
  { name: 'moving as a plain member arrives unshared', input: { previous: ACCOUNT, moving: true }, flags: OFF, dropped: true, scope: 'user' },
  { name: 'moving as a manager keeps sharing', input: { previous: ACCOUNT, moving: true, callerManagesTarget: true }, flags: ACCOUNT, dropped: false, scope: 'account' },
  { name: 'personal: all sharing off', input: { previous: { ...ACCOUNT, adminOnly: true }, moving: true, callerManagesTarget: true, target: { twinId: null, hasAccount: false } }, flags: OFF, dropped: true, scope: 'user' },
  { name: 'admin_only by the owner is refused', input: { previous: SHARED, requested: { adminOnly: true } }, flags: SHARED, dropped: true, scope: 'institution' },
  { name: 'system assistant', input: { system: true, callerIsOwner: false, target: { twinId: null, hasAccount: false } }, flags: OFF, dropped: false, scope: 'system' },
];

describe('decideSharing', () => {
  it.each(CASES)('$name', ({ input, flags, dropped, scope }) => {
    expect(decideSharing({ ...base, ...input })).toEqual({ flags, sharingDropped: dropped, scope });
  });
});
