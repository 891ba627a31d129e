// A person's memberships in the twins the admin manages: the role, the individual grants a member with
// the user role holds on top of it (an administrator holds every permission there), and removal from the
// twin. Offered as the service allows: never on one's own membership (SELF_ACTION), a super admin's
// memberships only to super admins (SUPER_ONLY).
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AdminUser } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile } from '../session';
import { adminSend } from './admin-api';
import { DataTable } from './ui';
// The service's own list (a plain file without imports), so the grants offered are exactly the ones it knows.
import { PERMISSIONS as PERMISSION_NAMES } from '../../../src/platform/http/permissions';

type Row = AdminUser['memberships'][number];

export function Memberships({ user, makeSuper }: { user: AdminUser; makeSuper: boolean }) {
  const profile = useProfile();
  const queryClient = useQueryClient();
  const [rows, setRows] = useState(user.memberships);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const editable = user._id !== profile._id && (user.accountType !== 'super' || makeSuper);
  // Shown at once, undone if the service refuses (its words then shown).
  const act = async (run: () => Promise<unknown>, message: string, after: (current: Row[]) => Row[]) => {
    setError(null);
    setDone(null);
    const before = rows;
    setRows(after);
    try {
      await run();
      setDone(message);
      await queryClient.invalidateQueries({ queryKey: ['admin-users'] });
    } catch (failure) {
      setRows(before);
      setError(failure);
    }
  };
  const change = (membership: Row, body: { role?: 'user' | 'admin'; permissions?: string[] }, message: string) =>
    act(
      () => adminSend('PUT', `/api/admin/membership/${membership._id}`, body),
      message,
      (current) => current.map((row) => (row._id === membership._id ? { ...row, ...body } : row)),
    );
  if (rows.length === 0) return null;
  return (
    <section aria-label="Memberships">
      <h3>Memberships</h3>
      {!editable && <p className="muted">{user._id === profile._id ? 'Your own memberships are changed by another administrator.' : "A super admin's memberships are changed by super admins."}</p>}
      <DataTable
        caption={`Twins of ${user.email}`}
        rows={rows}
        columns={[
          { header: 'Twin', cell: (membership) => membership.name },
          {
            header: 'Role',
            cell: (membership) =>
              editable ? (
                <select
                  aria-label={`Role in ${membership.name}`}
                  value={membership.role}
                  onChange={(event) => {
                    const role = event.target.value as 'user' | 'admin';
                    void change(membership, { role }, `Role in ${membership.name}: ${role}.`);
                  }}
                >
                  <option value="user">user</option>
                  <option value="admin">admin</option>
                </select>
              ) : (
                membership.role
              ),
          },
          {
            header: 'Grants',
            cell: (membership) =>
              membership.role === 'admin' ? (
                'every permission'
              ) : (
                <Grants membership={membership} editable={editable} onChange={(permissions, message) => change(membership, { permissions }, message)} />
              ),
          },
        ]}
        rowActions={
          editable
            ? (membership) => (
                <button
                  type="button"
                  className="button-link"
                  onClick={() =>
                    act(() => adminSend('DELETE', `/api/admin/membership/${membership._id}`), `Removed from ${membership.name}.`, (current) => current.filter((row) => row._id !== membership._id))
                  }
                >
                  Remove from {membership.name}
                </button>
              )
            : undefined
        }
      />
      {done && <p role="status">{done}</p>}
      <ErrorNotice error={error} />
    </section>
  );
}

/** A member's grants: each permission a switch, saved at once. */
function Grants({ membership, editable, onChange }: { membership: Row; editable: boolean; onChange: (permissions: string[], message: string) => void }) {
  const held = new Set(membership.permissions);
  if (!editable) return <>{membership.permissions.join(', ') || 'none'}</>;
  return (
    <details>
      <summary>
        {held.size} granted<span className="visually-hidden"> in {membership.name}</span>
      </summary>
      <fieldset className="grants">
        <legend className="visually-hidden">Grants in {membership.name}</legend>
        {PERMISSION_NAMES.map((permission) => (
          <label key={permission}>
            <input
              type="checkbox"
              checked={held.has(permission)}
              onChange={(event) => {
                const next = event.target.checked ? [...held, permission] : [...held].filter((name) => name !== permission);
                onChange(
                  PERMISSION_NAMES.filter((name) => next.includes(name)),
                  `${permission} ${event.target.checked ? 'granted' : 'withdrawn'} in ${membership.name}.`,
                );
              }}
            />{' '}
            {permission}
          </label>
        ))}
      </fieldset>
    </details>
  );
}
