// The administration console at /admin: its own layout and its own bundle (no chat socket, none of the
// chat's code). The navigation names the families the profile's permissions allow (families.ts); a
// family's screen is loaded when opened, or ahead when the console opens at its address (screens.ts).
import { useQuery } from '@tanstack/react-query';
import { Suspense, type ComponentType } from 'react';
import { api, unwrap } from '../api/client';
import { Navigate, NavLink, Route, Routes, useNavigate } from 'react-router';
import { ScreenBoundary } from '../components/ScreenBoundary';
import { useProfile, useSession } from '../session';
import { consoleScreenOf, consoleScreens } from '../screens';
import { familiesFor, type FamilyKey } from './families';

/** A family's screen, as screens.ts names it (so a console opened at its address fetched this one ahead). */
function screenOf(family: FamilyKey): React.ReactNode {
  const name = consoleScreenOf(family);
  if (name === 'catalogs' || name === 'lists') {
    const Screen = consoleScreens[name].Component;
    return <Screen family={family} />;
  }
  const Screen = consoleScreens[name].Component as ComponentType;
  return <Screen />;
}

export default function AdminConsole() {
  const profile = useProfile();
  const session = useSession();
  const navigate = useNavigate();
  // The current twin's role (the subscription is its administrators'): the memberships the chat reads too.
  const memberships = useQuery({ queryKey: ['memberships'], queryFn: () => unwrap(api.GET('/api/user/institutions')) });
  const role = memberships.data?.data.find((membership) => membership.current)?.role ?? null;
  const families = familiesFor({ ...profile, role });
  const signOut = async () => {
    await session.signOut();
    navigate('/signin');
  };
  return (
    <div className="console">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="brand">
          <span aria-hidden="true" className="brand-mark" />
          <span className="twin-name">Administration · {profile.institution?.name ?? 'no twin'}</span>
        </div>
        <div className="topbar-actions">
          <a href="/">Back to chat</a>
          <span className="who">{profile.fname || profile.email}</span>
          <button type="button" className="button-secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <div className="console-body">
        {families.length > 0 && (
          <nav className="console-nav" aria-label="Administration">
            <ul>
              {families.map((family) => (
                <li key={family.key}>
                  <NavLink to={`/admin/${family.path}`}>{family.label}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
        )}
        <main id="main" className="console-main">
          {memberships.isPending ? (
            <p className="loading" role="status">
              Loading…
            </p>
          ) : families.length === 0 ? (
            <>
              <h1>Administration</h1>
              <p>Your account has no administration rights in this twin.</p>
            </>
          ) : (
            <ScreenBoundary>
              <Suspense fallback={<p className="loading" role="status">Loading…</p>}>
                <Routes>
                  <Route index element={<Navigate to={`/admin/${families[0].path}`} replace />} />
                  {families.map((family) => (
                    <Route key={family.key} path={family.path} element={screenOf(family.key)} />
                  ))}
                  <Route path="*" element={<Navigate to="/admin" replace />} />
                </Routes>
              </Suspense>
            </ScreenBoundary>
          )}
        </main>
      </div>
    </div>
  );
}
