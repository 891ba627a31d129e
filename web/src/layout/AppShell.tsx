// The signed-in frame: a skip link, the twin switcher, navigation, a slot for the voice call button
// of a later release, sign-out. `?embed=1` (or a narrow frame) gives the compact mode an embedding
// page uses: chat only, no navigation.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { NavLink, useNavigate, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { familiesFor } from '../admin/families';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile, useSession } from '../session';

export function useCompactMode(): boolean {
  const [params] = useSearchParams();
  return params.get('embed') === '1';
}

function TwinSwitcher() {
  const profile = useProfile();
  const session = useSession();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const memberships = useQuery({ queryKey: ['memberships'], queryFn: () => unwrap(api.GET('/api/user/institutions')) });
  const [error, setError] = useState<unknown>(null);
  const switchTwin = useMutation({
    mutationFn: (institutionId: string) => unwrap(api.POST('/api/user/institution/switch', { body: { institutionId } })),
    onSuccess: async (answer) => {
      session.setProfile(answer.profile);
      await queryClient.invalidateQueries();
      navigate('/');
    },
    onError: setError,
  });
  const twins = memberships.data?.data ?? [];
  const current = profile.institution?._id ?? '';
  if (twins.length <= 1) return <span className="twin-name">{profile.institution?.name ?? 'No twin'}</span>;
  return (
    <>
      <label className="visually-hidden" htmlFor="twin-switcher">
        Twin
      </label>
      <select id="twin-switcher" className="twin-switcher" value={current} onChange={(event) => switchTwin.mutate(event.target.value)} disabled={switchTwin.isPending}>
        {twins.map((membership) => (
          <option key={membership._id} value={membership.institution._id}>
            {membership.institution.name}
          </option>
        ))}
      </select>
      <ErrorNotice error={error} />
    </>
  );
}

export function AppShell({ children }: { children: ReactNode }) {
  const profile = useProfile();
  const session = useSession();
  const navigate = useNavigate();
  const compact = useCompactMode();
  // The console's own rule (admin/families.ts): the link shows when at least one family is allowed.
  const isAdmin = familiesFor(profile).length > 0;
  const signOut = async () => {
    await session.signOut();
    navigate('/signin');
  };
  return (
    <div className={compact ? 'shell shell-compact' : 'shell'}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {!compact && (
        <header className="topbar">
          <div className="brand">
            <span aria-hidden="true" className="brand-mark" />
            <TwinSwitcher />
          </div>
          <nav aria-label="Main">
            <NavLink to="/" end>
              Chat
            </NavLink>
            <NavLink to="/files">Files</NavLink>
            <NavLink to="/memory">Memory</NavLink>
            <NavLink to="/settings">Settings</NavLink>
            {isAdmin && <NavLink to="/admin">Admin</NavLink>}
          </nav>
          <div className="topbar-actions">
            {/* Slot for the voice call button (a later release). */}
            <div className="call-slot" data-slot="call" />
            <span className="who">{profile.fname || profile.email}</span>
            <button type="button" className="button-secondary" onClick={signOut}>
              Sign out
            </button>
          </div>
        </header>
      )}
      {children}
    </div>
  );
}
