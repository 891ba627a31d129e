// The launch-scope step-up (behaviour 16): mail a code to the account, then confirm it (or mail a new
// one); the answer is a full session, which replaces this one.
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { explainError } from '../api/errors';
import { useSession } from '../session';

export function StepUp() {
  const session = useSession();
  const [sent, setSent] = useState(false);
  const [resent, setResent] = useState(false);
  const [done, setDone] = useState(false);
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  const attempt = async (work: () => Promise<void>) => {
    setProblem(null);
    try {
      await work();
    } catch (error) {
      const explained = explainError(error);
      setProblem(`${explained.title}. ${explained.detail}`);
    }
  };
  const send = () =>
    attempt(async () => {
      await unwrap(api.POST('/api/user/launch-scope/challenge', { body: {} }));
      setSent(true);
    });
  const resend = () =>
    attempt(async () => {
      await unwrap(api.POST('/api/auth/mfa-resend', { body: {} }));
      setCode('');
      setResent(true);
    });
  const confirm = (event: FormEvent) => {
    event.preventDefault();
    void attempt(async () => {
      const answer = await unwrap(api.POST('/api/auth/mfa-verify', { body: { code: code.trim() } }));
      if ('token' in answer) {
        session.signedIn(answer.token, answer.profile);
        setDone(true);
      }
    });
  };
  if (done) return <p role="status">Confirmed: this session may now do everything your account may. Try again.</p>;
  return (
    <div className="step-up">
      {!sent ? (
        <button type="button" onClick={() => void send()}>
          Email me a code
        </button>
      ) : (
        <form onSubmit={confirm} className="inline-form">
          <p role="status">{resent ? 'We emailed you a new code; the earlier one no longer works.' : 'We emailed you a code.'}</p>
          <label>
            Code from the email
            <input value={code} onChange={(event) => setCode(event.target.value)} inputMode="numeric" autoComplete="one-time-code" required />
          </label>
          <button type="submit">Confirm</button>
          <button type="button" className="button-link" onClick={() => void resend()}>
            Email me a new code
          </button>
        </form>
      )}
      {problem && <p role="alert">{problem}</p>}
    </div>
  );
}
