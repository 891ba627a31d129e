// Two-step verification: set up an authenticator app (the secret as a QR code and as text), confirm
// with its first code, then the 10 backup codes, shown this once; or turn it off with a code.
import { useEffect, useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile, useSession } from '../session';

function QrCode({ text }: { text: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void import('qrcode').then((qr) => qr.toDataURL(text, { margin: 1, width: 200 })).then((url) => live && setSrc(url));
    return () => {
      live = false;
    };
  }, [text]);
  return src ? <img src={src} width={200} height={200} alt="QR code to scan with your authenticator app" className="qr" /> : <p>Drawing the QR code…</p>;
}

export function TwoStep() {
  const profile = useProfile();
  const session = useSession();
  const [pending, setPending] = useState<{ secret: string; otpauthUrl: string } | null>(null);
  const [code, setCode] = useState('');
  const [backupCodes, setBackupCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const enabled = Boolean(profile.mfaEnabled);

  const run = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught);
    }
  };
  const start = () => run(async () => setPending(await unwrap(api.POST('/api/user/me/totp/setup'))));
  const confirm = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const answer = await unwrap(api.POST('/api/user/me/totp/confirm', { body: { code: code.trim() } }));
      setBackupCodes(answer.backupCodes);
      setPending(null);
      setCode('');
      await session.refreshProfile();
    });
  };
  const disable = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await unwrap(api.POST('/api/user/me/totp/disable', { body: { code: code.trim() } }));
      setCode('');
      setBackupCodes(null);
      await session.refreshProfile();
    });
  };

  return (
    <section className="card" aria-labelledby="two-step">
      <h2 id="two-step">Two-step verification</h2>
      {backupCodes && (
        <div className="notice" role="status">
          <strong>Two-step verification is on.</strong>
          <p>Keep these backup codes somewhere safe. Each works once, when you cannot use your app. They are shown only now.</p>
          <ol className="backup-codes" aria-label="Backup codes">
            {backupCodes.map((backup) => (
              <li key={backup}>
                <code>{backup}</code>
              </li>
            ))}
          </ol>
          <button type="button" className="button-secondary" onClick={() => void navigator.clipboard?.writeText(backupCodes.join('\n'))}>
            Copy the codes
          </button>
          <button type="button" className="button-link" onClick={() => setBackupCodes(null)}>
            I have saved them
          </button>
        </div>
      )}
      {!enabled && !pending && (
        <>
          <p>Protect your account with a code from an authenticator app each time you sign in.</p>
          <button type="button" onClick={() => void start()}>
            Set up an authenticator app
          </button>
        </>
      )}
      {pending && (
        <div>
          <p>Scan this QR code with your authenticator app, or enter the key by hand.</p>
          <QrCode text={pending.otpauthUrl} />
          <p>
            Key: <code data-testid="totp-secret">{pending.secret}</code>
          </p>
          <form onSubmit={confirm} className="inline-form">
            <label>
              Code shown by the app
              <input value={code} onChange={(event) => setCode(event.target.value)} inputMode="numeric" pattern="\d{6}" autoComplete="one-time-code" required />
            </label>
            <button type="submit">Turn on</button>
            <button type="button" className="button-secondary" onClick={() => setPending(null)}>
              Cancel
            </button>
          </form>
        </div>
      )}
      {enabled && !pending && (
        <form onSubmit={disable} className="inline-form">
          <p>Two-step verification is on{profile.mfaMethod === 'totp' ? ' with an authenticator app' : ' with emailed codes'}.</p>
          <label>
            Code from your app, or a backup code
            <input value={code} onChange={(event) => setCode(event.target.value)} autoComplete="one-time-code" required />
          </label>
          <button type="submit" className="button-danger">
            Turn off
          </button>
        </form>
      )}
      <ErrorNotice error={error} />
    </section>
  );
}
