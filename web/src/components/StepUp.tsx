// The launch-scope step-up (behaviour 16): mail a code to the account, then confirm it; the answer is a
// full session, which replaces this one.
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { explainError } from '../api/errors';
import { useSession } from '../session';

export function StepUp() {
  const session = useSession();
  const [sent, setSent] = useState(false);
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  const send = async () => {
    setProblem(null);
    try {
      await unwrap(api.POST('/api/user/launch-scope/challenge', { body: {} }));
      setSent(true);
    } catch (error) {
      setProblem(explainError(error).detail);
    }
  };
  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    try {
      const answer = await unwrap(api.POST('/api/auth/mfa-verify', { body: { code } }));
      if ('token' in answer) session.signedIn(answer.token, answer.profile);
    } catch (error) {
      setProblem(explainError(error).detail);
    }
  };
  return (
    <div className="step-up">
      {!sent ? (
        <button type="button" onClick={send}>
          Email me a code
        </button>
      ) : (
        <form onSubmit={confirm} className="inline-form">
          <label>
            Code from the email
            <input value={code} onChange={(event) => setCode(event.target.value)} inputMode="numeric" autoComplete="one-time-code" required />
          </label>
          <button type="submit">Confirm</button>
        </form>
      )}
      {problem && <p role="alert">{problem}</p>}
    </div>
  );
}
