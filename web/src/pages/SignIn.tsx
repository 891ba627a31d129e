// Sign in: email and password, or one of the deployment's sign-in providers, then the second factor when
// the account has one (authenticator code, emailed code, or a backup code; "email me a code" switches this
// sign-in to an emailed code); /signin?twin=<publicId> lists that twin's own providers too. At
// /signin/oauth (`handoff`) the page collects the sign-in a provider's callback handed over (POST
// /api/auth/oauth/handoff): a session, a second-factor challenge or a failure.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { ApiError } from '../api/api-error';
import { api, tokenStore, unwrap } from '../api/client';
import type { MfaChallenge } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { ProviderLinks } from '../components/ProviderLinks';
import { useSession } from '../session';

type Method = 'totp' | 'email' | 'backup';

const METHOD_LABEL: Record<Method, string> = {
  totp: 'Code from your authenticator app',
  email: 'Code from the email we sent you',
  backup: 'One of your backup codes',
};

export function SignInPage({ handoff = false }: { handoff?: boolean }) {
  const session = useSession();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<MfaChallenge | null>(null);
  const [method, setMethod] = useState<Method>('totp');
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [info, setInfo] = useState<string | null>(null);
  /** Whether a code was mailed for this sign-in (choosing "Emailed code" mails one when none was). */
  const [mailed, setMailed] = useState(false);
  const [busy, setBusy] = useState(false);
  /** Collecting a provider's sign-in on arrival at /signin/oauth. */
  const [arriving, setArriving] = useState(handoff);
  /** The handoff is collected once (its cookie is cleared when read), even where effects run twice. */
  const collecting = useRef(false);

  const finish = (token: string, profile: Parameters<typeof session.signedIn>[1]) => {
    session.signedIn(token, profile);
    navigate(profile.mustChangePassword ? '/change-password' : '/', { replace: true });
  };

  useEffect(() => {
    if (!handoff || collecting.current) return;
    collecting.current = true;
    (async () => {
      try {
        const answer = await unwrap(api.POST('/api/auth/oauth/handoff', { body: {} }));
        if ('mfaRequired' in answer) {
          setChallenge(answer);
          setMethod(answer.mfaMethod);
          setMailed(answer.mfaMethod === 'email');
          setInfo(answer.mfaMethod === 'email' ? 'We emailed a code to you.' : null);
          return;
        }
        // The profile comes with the session's own token, as on a reload.
        tokenStore.set(answer.token);
        const refreshed = await unwrap(api.POST('/api/user/refresh/profile', { body: {} }));
        finish(answer.token, refreshed.profile);
      } catch (caught) {
        tokenStore.clear();
        setError(caught);
      } finally {
        setArriving(false);
      }
    })();
    // Once, on arrival: `finish` and the setters are not reasons to collect again.
  }, [handoff]);

  const submitPassword = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await unwrap(api.POST('/api/auth/signin', { body: { email, password } }));
      if ('mfaRequired' in answer) {
        setChallenge(answer);
        setMethod(answer.mfaMethod);
        setMailed(answer.mfaMethod === 'email');
        setInfo(answer.mfaMethod === 'email' ? `We emailed a code to ${email}.` : null);
      } else finish(answer.token, answer.profile);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const submitCode = async (event: FormEvent) => {
    event.preventDefault();
    if (!challenge) return;
    setBusy(true);
    setError(null);
    try {
      const answer = await unwrap(api.POST('/api/auth/mfa-verify', { body: { mfaToken: challenge.mfaToken, code: code.trim(), method } }));
      if ('token' in answer) finish(answer.token, answer.profile);
    } catch (caught) {
      setError(caught);
      // The pending sign-in is over (expired, or too many wrong codes): back to email and password.
      if (caught instanceof ApiError && caught.code === 'MFA_EXPIRED') restart();
    } finally {
      setBusy(false);
    }
  };

  const restart = () => {
    setChallenge(null);
    setCode('');
    setInfo(null);
    setMailed(false);
  };

  const resend = async () => {
    if (!challenge) return;
    setError(null);
    try {
      const answer = await unwrap(api.POST('/api/auth/mfa-resend', { body: { mfaToken: challenge.mfaToken } }));
      setMethod('email');
      setCode('');
      const to = email ? ` to ${email}` : ' to you';
      setInfo(mailed ? `${answer.message ?? `We emailed a new code${to}`}. Earlier codes no longer work.` : `We emailed a code${to}.`);
      setMailed(true);
    } catch (caught) {
      setError(caught);
      if (caught instanceof ApiError && caught.code === 'MFA_EXPIRED') restart();
    }
  };

  const choose = (choice: Method) => {
    setMethod(choice);
    if (choice === 'email' && !mailed) void resend();
  };

  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <h1>Sign in</h1>
        {arriving ? (
          <p role="status">Finishing signing in…</p>
        ) : !challenge ? (
          <>
            <form onSubmit={submitPassword}>
              <label>
                Email
                <input type="email" autoComplete="username" value={email} onChange={(event) => setEmail(event.target.value)} required autoFocus />
              </label>
              <label>
                Password
                <input type="password" autoComplete="current-password" value={password} onChange={(event) => setPassword(event.target.value)} required />
              </label>
              <button type="submit" disabled={busy}>
                {busy ? 'Signing in…' : 'Sign in'}
              </button>
              <p className="auth-links">
                <Link to="/forgot-password">Forgot your password?</Link>
              </p>
            </form>
            <ProviderLinks />
          </>
        ) : (
          <form onSubmit={submitCode} aria-describedby="mfa-help">
            <h2>Two-step verification</h2>
            <p id="mfa-help" role="status">
              {info ?? 'Enter a code to finish signing in.'}
            </p>
            <fieldset className="method-choice">
              <legend>How do you want to confirm?</legend>
              {challenge.methods.map((choice) => (
                <label key={choice} className="radio">
                  <input type="radio" name="method" value={choice} checked={method === choice} onChange={() => choose(choice)} />
                  {choice === 'totp' ? 'Authenticator app' : choice === 'email' ? 'Emailed code' : 'Backup code'}
                </label>
              ))}
            </fieldset>
            <label>
              {METHOD_LABEL[method]}
              <input
                value={code}
                onChange={(event) => setCode(event.target.value)}
                autoComplete="one-time-code"
                inputMode={method === 'backup' ? 'text' : 'numeric'}
                required
                autoFocus
              />
            </label>
            <button type="submit" disabled={busy}>
              Verify
            </button>
            <button type="button" className="button-link" onClick={resend}>
              {method === 'email' ? 'Email me a new code' : 'Email me a code instead'}
            </button>
            <button type="button" className="button-link" onClick={restart}>
              Start again
            </button>
          </form>
        )}
        <ErrorNotice error={error} />
      </div>
    </main>
  );
}
