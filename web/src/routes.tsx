// The client's routes. Signed-out pages, the forced password change, and the signed-in area (chat,
// files, memory, settings; /admin is reserved for the console of a later release), and /launch, where a
// launch token becomes a session restricted to its twin; /signin/oauth collects a provider's sign-in.
import { lazy, Suspense, useEffect } from 'react';
import { Navigate, Outlet, Route, Routes, useLocation } from 'react-router';
import { LiveProvider } from './chat/live';
import { AppShell } from './layout/AppShell';
import { ChatPage } from './pages/ChatPage';
import { LaunchPage } from './pages/LaunchPage';
import { ForcedPasswordChangePage, ForgotPasswordPage, ResetPasswordPage } from './pages/PasswordPages';
import { SignInPage } from './pages/SignIn';
import { useSession } from './session';

const FilesPage = lazy(() => import('./pages/FilesPage'));
const MemoryPage = lazy(() => import('./pages/MemoryPage'));
const SettingsPage = lazy(() => import('./pages/SettingsPage'));
const AdminPage = lazy(() => import('./pages/AdminPage'));

function useTheme(dark: boolean | undefined) {
  useEffect(() => {
    const root = document.documentElement;
    if (dark === undefined) delete root.dataset.theme;
    else root.dataset.theme = dark ? 'dark' : 'light';
  }, [dark]);
}

function SignedIn() {
  const { token, profile, restoring } = useSession();
  const location = useLocation();
  useTheme(profile?.dark_mode);
  if (restoring) return <p className="loading" role="status">Loading…</p>;
  if (!token || !profile) return <Navigate to="/signin" replace state={{ from: location.pathname }} />;
  if (profile.mustChangePassword) return <Navigate to="/change-password" replace />;
  return (
    <LiveProvider>
      <AppShell>
        <Suspense fallback={<p className="loading" role="status">Loading…</p>}>
          <Outlet />
        </Suspense>
      </AppShell>
    </LiveProvider>
  );
}

function SignedOut({ children }: { children: React.ReactNode }) {
  const { token, profile } = useSession();
  if (token && profile && !profile.mustChangePassword) return <Navigate to="/" replace />;
  return children;
}

export function AppRoutes() {
  const { token } = useSession();
  return (
    <Routes>
      <Route path="/signin" element={<SignedOut><SignInPage /></SignedOut>} />
      <Route path="/signin/oauth" element={<SignInPage handoff />} />
      <Route path="/forgot-password" element={<ForgotPasswordPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      <Route path="/launch" element={<LaunchPage />} />
      <Route path="/change-password" element={token ? <ForcedPasswordChangePage /> : <Navigate to="/signin" replace />} />
      <Route element={<SignedIn />}>
        <Route index element={<ChatPage />} />
        <Route path="c/:conversationId" element={<ChatPage />} />
        <Route path="files" element={<FilesPage />} />
        <Route path="memory" element={<MemoryPage />} />
        <Route path="settings" element={<SettingsPage />} />
        <Route path="admin/*" element={<AdminPage />} />
      </Route>
      <Route path="*" element={<Navigate to="/" replace />} />
    </Routes>
  );
}
