// The administration console at /admin: its own layout and its own bundle (no chat socket, none of the
// chat's code). The navigation names the families the profile's permissions allow (families.ts); a
// family's screen is loaded when opened, or ahead when the console opens at its address (screens.ts).
import { useQuery } from '@tanstack/react-query';
import { Suspense } from 'react';
import { api, unwrap } from '../api/client';
import { Navigate, NavLink, Route, Routes, useNavigate } from 'react-router';
import { ScreenBoundary } from '../components/ScreenBoundary';
import { useProfile, useSession } from '../session';
import { consoleScreens } from '../screens';
import { familiesFor, type FamilyKey } from './families';

const Dashboard = consoleScreens.dashboard.Component;
const People = consoleScreens.people.Component;
const Twins = consoleScreens.twins.Component;
const Questions = consoleScreens.questions.Component;
const McpServers = consoleScreens.mcp.Component;
const Tools = consoleScreens.tools.Component;
const Lists = consoleScreens.lists.Component;
const Catalogs = consoleScreens.catalogs.Component;
const Subscription = consoleScreens.subscription.Component;

const SCREENS: Partial<Record<FamilyKey, React.ReactNode>> = {
  dashboard: <Dashboard />,
  people: <People />,
  twins: <Twins />,
  questions: <Questions />,
  mcp: <McpServers />,
  tools: <Tools />,
  subscription: <Subscription />,
  assistants: <Catalogs family="assistants" />,
  models: <Catalogs family="models" />,
  sso: <Catalogs family="sso" />,
  entitlements: <Catalogs family="entitlements" />,
  accounts: <Catalogs family="accounts" />,
};

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
                    <Route key={family.key} path={family.path} element={SCREENS[family.key] ?? <Lists family={family.key} />} />
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
