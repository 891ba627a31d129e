// Forgot password (mails a link), reset password (from that link's token), and the forced change an
// administrator can ask for (mustChangePassword: nothing else works until it is done).
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { useSession } from '../session';

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await unwrap(api.POST('/api/auth/forgot-password', { body: { email } }));
      setSent(true);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <h1>Forgot your password?</h1>
        {sent ? (
          <p role="status">If an account uses {email}, we have emailed it a link to choose a new password. The link works for one hour.</p>
        ) : (
          <form onSubmit={submit}>
            <label>
              Email
              <input type="email" autoComplete="username" value={email} onChange={(event) => setEmail(event.target.value)} required autoFocus />
            </label>
            <button type="submit">Email me a link</button>
          </form>
        )}
        <ErrorNotice error={error} />
        <p className="auth-links">
          <Link to="/signin">Back to sign-in</Link>
        </p>
      </div>
    </main>
  );
}

function NewPasswordFields({ password, setPassword, repeat, setRepeat }: { password: string; setPassword(v: string): void; repeat: string; setRepeat(v: string): void }) {
  return (
    <>
      <label>
        New password
        <input type="password" autoComplete="new-password" minLength={8} value={password} onChange={(event) => setPassword(event.target.value)} required />
      </label>
      <label>
        Repeat the new password
        <input type="password" autoComplete="new-password" value={repeat} onChange={(event) => setRepeat(event.target.value)} required />
      </label>
    </>
  );
}

export function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [mismatch, setMismatch] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setMismatch(password !== repeat);
    if (password !== repeat) return;
    try {
      await unwrap(api.POST('/api/auth/reset-password', { body: { token, password } }));
      setDone(true);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <h1>Choose a new password</h1>
        {!token && <p role="alert">This link has no reset token. Ask for a new link.</p>}
        {done ? (
          <p role="status">
            Your password is changed. <Link to="/signin">Sign in</Link>
          </p>
        ) : (
          <form onSubmit={submit}>
            <NewPasswordFields password={password} setPassword={setPassword} repeat={repeat} setRepeat={setRepeat} />
            {mismatch && <p role="alert">The two passwords differ.</p>}
            <button type="submit" disabled={!token}>
              Save the new password
            </button>
          </form>
        )}
        <ErrorNotice error={error} />
        <p className="auth-links">
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      </div>
    </main>
  );
}

export function ChangePasswordForm({ forced }: { forced?: boolean }) {
  const session = useSession();
  const navigate = useNavigate();
  const [currentPassword, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [mismatch, setMismatch] = useState(false);
  const [done, setDone] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setMismatch(password !== repeat);
    if (password !== repeat) return;
    try {
      await unwrap(api.POST('/api/user/me/password', { body: { currentPassword, newPassword: password } }));
      await session.refreshProfile();
      setDone(true);
      if (forced) navigate('/', { replace: true });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <form onSubmit={submit}>
      <label>
        Current password
        <input type="password" autoComplete="current-password" value={currentPassword} onChange={(event) => setCurrent(event.target.value)} required />
      </label>
      <NewPasswordFields password={password} setPassword={setPassword} repeat={repeat} setRepeat={setRepeat} />
      {mismatch && <p role="alert">The two passwords differ.</p>}
      <button type="submit">Change password</button>
      {done && <p role="status">Your password is changed; other sessions were signed out.</p>}
      <ErrorNotice error={error} />
    </form>
  );
}

export function ForcedPasswordChangePage() {
  const session = useSession();
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <h1>Choose a new password</h1>
        <p>Your administrator asks you to change your password before you continue.</p>
        <ChangePasswordForm forced />
        <button type="button" className="button-link" onClick={() => void session.signOut()}>
          Sign out
        </button>
      </div>
    </main>
  );
}
