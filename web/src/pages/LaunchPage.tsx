// Opened from a course page or another launcher: /launch#token=<launch token>. The token (single use,
// in the fragment so it never reaches a server log or a Referer) becomes a session restricted to its
// twin (behaviour 16); routes outside that twin's day-to-day work then offer the emailed-code step-up.
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { useSession } from '../session';

export function LaunchPage() {
  const session = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const token = new URLSearchParams(location.hash.slice(1)).get('token');
    // The token is spent by the exchange: out of the address bar and the history at once.
    history.replaceState(null, '', location.pathname);
    if (!token) {
      setError(new Error('This link carries no launch token. Open it again from the page that sent you here.'));
      return;
    }
    unwrap(api.POST('/api/auth/sdk-verify', { body: { token } }))
      .then((answer) => {
        session.signedIn(answer.token, answer.profile);
        navigate('/', { replace: true });
      })
      .catch(setError);
  }, [session, navigate]);
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <h1>Opening your twin</h1>
        {!error && <p role="status">Signing you in…</p>}
        <ErrorNotice error={error} />
        {Boolean(error) && (
          <p className="auth-links">
            <Link to="/signin">Sign in with your email instead</Link>
          </p>
        )}
      </div>
    </main>
  );
}
