// The client's routes. Signed-out pages, the forced password change, the signed-in areas: the people's
// (chat, files, memory, settings: chat-area.tsx) and the administration console (/admin:
// admin/AdminConsole.tsx), each its own bundle loaded when first opened (or ahead, at the start of a
// signed-in tab: screens.ts), so neither loads the other's code; and /launch, where a launch token becomes a session restricted to its twin; /signin/oauth
// collects a provider's sign-in.
import { Suspense, useEffect } from 'react';
import { Navigate, Outlet, Route, Routes, useLocation } from 'react-router';
import { ScreenBoundary } from './components/ScreenBoundary';
import { LaunchPage } from './pages/LaunchPage';
import { ForcedPasswordChangePage, ForgotPasswordPage, ResetPasswordPage } from './pages/PasswordPages';
import { SignInPage } from './pages/SignIn';
import { adminConsole, chatArea } from './screens';
import { useSession } from './session';

const ChatArea = chatArea.Component;
const AdminConsole = adminConsole.Component;

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
    <Suspense fallback={<p className="loading" role="status">Loading…</p>}>
      <Outlet />
    </Suspense>
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
    <ScreenBoundary>
      <Routes>
        <Route path="/signin" element={<SignedOut><SignInPage /></SignedOut>} />
        <Route path="/signin/oauth" element={<SignInPage handoff />} />
        <Route path="/forgot-password" element={<ForgotPasswordPage />} />
        <Route path="/reset-password" element={<ResetPasswordPage />} />
        <Route path="/launch" element={<LaunchPage />} />
        <Route path="/change-password" element={token ? <ForcedPasswordChangePage /> : <Navigate to="/signin" replace />} />
        <Route element={<SignedIn />}>
          <Route path="admin/*" element={<AdminConsole />} />
          <Route path="*" element={<ChatArea />} />
        </Route>
      </Routes>
    </ScreenBoundary>
  );
}
